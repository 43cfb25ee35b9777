"""User text through ui.safe.escape_markdown into st.markdown and st.caption, for test_browser_safe_text.

Each sample is drawn twice (markdown, caption) inside a container keyed by its index; one sample is drawn raw as
well, so the test shows its detectors find a link and an icon when markdown is left to interpret the text.
"""
import streamlit as st

from ui.safe import escape_markdown

SAMPLES = (
    "www.evil.example",
    "see http://evil.example/x and https://evil.example",
    "#h :material/lock: :smile:",
    "**bold** _it_ [a](http://evil.example) <b>tag</b> `code` $x^2$ :red[colour]",
)

if __name__ == "__main__":   # as Streamlit runs it; the test imports SAMPLES alone
    for n, text in enumerate(SAMPLES):
        with st.container(key=f"sample-{n}"):
            st.markdown(escape_markdown(text))
            st.caption(escape_markdown(text))
    with st.container(key="raw"):
        st.markdown("www.evil.example :material/lock:")
