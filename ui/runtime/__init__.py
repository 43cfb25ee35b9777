"""What keeps a page run cheap, and the places that lean on Streamlit's internals."""
