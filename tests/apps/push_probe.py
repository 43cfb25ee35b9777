"""A page for tests/test_fragment_push.py: a fragment that, the first time it is drawn, has the server rerun it
0.2 s later from another thread (ui.runtime.fragment_push), as a live room's listener does after a NOTIFY."""
import threading

import streamlit as st

from ui.runtime import fragment_push

st.markdown("outside the fragment")
st.markdown(f"outside a fragment, this_fragment() is {fragment_push.this_fragment()}")


@st.fragment
def area() -> None:
    runs = st.session_state["area_runs"] = st.session_state.get("area_runs", 0) + 1
    st.markdown(f"area run {runs}")
    page = fragment_push.this_fragment()
    if runs == 1 and page is not None:
        threading.Timer(0.2, fragment_push.rerun, [page]).start()


area()
