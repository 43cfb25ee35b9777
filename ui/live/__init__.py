"""The live room: the instructor's console, each seat's room part, and the pushes that keep them in step."""
