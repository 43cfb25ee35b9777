"""The LTI 1.3 tool, beside the app: a small Flask (WSGI) app for the LMS's login, launch and key set.

`settings` reads the registration and keys, `keys` makes and rotates the tool's RSA keys, `app` is the
Flask app (create_app). It hands the Streamlit page a one-time code from the attempt store (drills.store.lti).
"""
