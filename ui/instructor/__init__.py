"""The instructor's board: access, tabs, figures, exports and classes."""
