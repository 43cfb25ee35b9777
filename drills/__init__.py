"""The drill domain: content schema, loader, scoring, time box and attempt store.

Nothing here imports Streamlit; pages reach it through ui/."""
