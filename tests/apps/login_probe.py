"""The smallest Streamlit app that signs in with st.login: the sign-in tests' proof of the provider harness.

Signed out it offers "Sign in"; signed in it shows the account's e-mail, every claim st.user holds
(as JSON, so a test reads them) and "Sign out".
"""
import json

import streamlit as st

if not st.user.is_logged_in:
    st.text("Signed out")
    if st.button("Sign in"):
        st.login()
else:
    # An account's claims are text from elsewhere: shown with st.text, never as markdown or HTML.
    st.text(f"Signed in as {st.user.email}")
    st.text(f"Claims: {json.dumps(st.user.to_dict(), sort_keys=True)}")
    if st.button("Sign out"):
        st.logout()
