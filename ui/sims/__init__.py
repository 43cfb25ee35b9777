"""The simulation pages: tabs and sliders, guess-then-play, runs, spreads, comparisons and their figures."""
