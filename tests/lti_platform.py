"""A stand-in LMS for the LTI tests, written from the IMS messages (LTI 1.3 core, Security Framework).

It holds an RSA key, serves its key set on 127.0.0.1, answers the tool's OIDC login redirect by minting a
signed id token, and lets a test bend any claim to check a refusal. Token times are fixed numbers far from
today (issued in 2001, expiring in 2100, or expired in 2001), so no test depends on the wall clock.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUED = 1_000_000_000        # 2001-09-09
FAR_FUTURE = 4_102_444_800    # 2100-01-01
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"


def new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Platform:
    def __init__(self, issuer_path: str = "/lms", client_id: str = "tool-client", deployment_id: str = "dep-1"):
        self.key = new_key()
        self.kid = "lms-key-1"
        self.client_id = client_id
        self.deployment_id = deployment_id
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/lms/jwks":
                    jwk = json.loads(RSAAlgorithm.to_jwk(platform.key.public_key()))
                    jwk.update(kid=platform.kid, alg="RS256", use="sig")
                    body = json.dumps({"keys": [jwk]}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self.send_error(404)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.issuer = self.url + issuer_path
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def registration(self) -> dict:
        return {"issuer": self.issuer, "client_id": self.client_id, "deployment_ids": [self.deployment_id],
                "key_set_url": self.url + "/lms/jwks", "auth_login_url": self.url + "/lms/auth",
                "auth_token_url": self.url + "/lms/token"}

    def login_params(self, tool_url: str) -> dict:
        return {"iss": self.issuer, "login_hint": "user-7", "target_link_uri": tool_url + "/launch",
                "lti_message_hint": "link-1", "client_id": self.client_id, "lti_deployment_id": self.deployment_id}

    def id_token(self, auth_redirect: str, *, key=None, kid: str | None = None, **changes) -> tuple[str, str]:
        """(id_token, state) answering the tool's redirect to the auth URL; `changes` replace claims."""
        query = {k: v[0] for k, v in parse_qs(urlparse(auth_redirect).query).items()}
        claims = {
            "iss": self.issuer, "aud": self.client_id, "sub": "user-7", "iat": ISSUED, "exp": FAR_FUTURE,
            "nonce": query.get("nonce"), "name": "Ada Lovelace", "email": "ada@example.org",
            CLAIM + "deployment_id": self.deployment_id, CLAIM + "message_type": "LtiResourceLinkRequest",
            CLAIM + "version": "1.3.0", CLAIM + "target_link_uri": query.get("redirect_uri"),
            CLAIM + "resource_link": {"id": "link-1", "title": "One Tenant"},
            CLAIM + "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
            CLAIM + "context": {"id": "course-42", "title": "Systems 101"},
            CLAIM + "custom": {"drill": "one-tenant"},
        }
        for name, value in changes.items():
            claims[name.replace("__", "/")] = value
        token = jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})
        return token, query.get("state", "")
