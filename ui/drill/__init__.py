"""The drill's pages: start, the question forms, reveals, the rubric, results, the clocks, history and review."""
