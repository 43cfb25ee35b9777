"""The real OpenID Connect provider the sign-in tests go through: `node tests/oidc/provider.mjs` on loopback.

OidcProvider starts it (the pinned oidc-provider in node_modules) and auth_secrets() writes the
`[auth]` block a Streamlit server needs to sign in through it (docs/testing-sign-in.md).
"""
from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench.stack import stop_process

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "oidc" / "provider.mjs"
PACKAGE = ROOT / "node_modules" / "oidc-provider" / "package.json"
# Any port of either loopback name: each test app server picks a free port.
LOOPBACK_REDIRECTS = ("http://localhost:*/oauth2callback", "http://127.0.0.1:*/oauth2callback")


class OidcProviderError(RuntimeError):
    """The provider could not be started: node or node_modules missing, or it failed on start-up."""


class OidcProvider:
    """One provider process with one confidential client; `with OidcProvider() as p:` stops it afterwards.

    Every login is accepted with any password. `claims` maps a login to extra claims its ID token
    carries (for instance `{"ada@school.test": {"roles": ["instructor"]}}`); set_claims() changes them
    while the provider runs, from the next sign-in on. `roles`, `groups` and the claims named in
    `claims` at start can be released.
    """

    def __init__(self, *, client_id: str = "faultlines-tests", client_secret: str = "faultlines-tests-secret",
                 redirect_uris: tuple[str, ...] | list[str] = LOOPBACK_REDIRECTS,
                 claims: dict[str, dict] | None = None, port: int = 0, log_path: Path | None = None):
        self.client_id, self.client_secret = client_id, client_secret
        self.redirect_uris = list(redirect_uris)
        self.claims = {login: dict(extra) for login, extra in (claims or {}).items()}
        self.releasable = {"roles", "groups", *(name for extra in self.claims.values() for name in extra)}
        self.port = port
        self.log_path = log_path
        self.issuer: str | None = None
        self.proc: subprocess.Popen | None = None
        self._claims_dir: Path | None = None

    @property
    def metadata_url(self) -> str:
        if self.issuer is None:
            raise OidcProviderError("the provider is not started")
        return f"{self.issuer}/.well-known/openid-configuration"

    def start(self, timeout: float = 30) -> OidcProvider:
        node = shutil.which("node")
        if node is None:
            raise OidcProviderError("node is missing: the sign-in tests run a real OpenID provider on Node.js "
                                    "(apt-get install nodejs npm, as .ci/run does)")
        if not PACKAGE.exists():
            raise OidcProviderError(f"{PACKAGE.parent} is missing: run `npm ci` in {ROOT} "
                                    "(python -m tests does it) to install the pinned oidc-provider")
        self._claims_dir = Path(tempfile.mkdtemp(prefix="faultlines-oidc-"))
        self._write_claims()
        env = {**os.environ, "OIDC_PORT": str(self.port), "OIDC_CLIENT_ID": self.client_id,
               "OIDC_CLIENT_SECRET": self.client_secret, "OIDC_REDIRECT_URIS": " ".join(self.redirect_uris),
               "OIDC_CLAIMS_FILE": str(self._claims_path), "OIDC_CLAIM_NAMES": " ".join(sorted(self.releasable))}
        with open(self.log_path or os.devnull, "ab") as log:   # the child keeps its own descriptor
            self.proc = subprocess.Popen([node, str(SCRIPT)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                         stderr=log, start_new_session=True)
        try:
            self.issuer = self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def _claims_path(self) -> Path:
        assert self._claims_dir is not None
        return self._claims_dir / "claims.json"

    def _write_claims(self) -> None:
        scratch = self._claims_path.with_suffix(".tmp")
        scratch.write_text(json.dumps(self.claims))
        scratch.replace(self._claims_path)   # the provider never reads a half-written file

    def set_claims(self, login: str, claims: dict) -> None:
        """Give `login` these extra claims (replacing its earlier ones) from its next sign-in on."""
        unreleased = set(claims) - self.releasable
        if unreleased:
            raise ValueError(f"{sorted(unreleased)} would not reach the app: name them in claims= when "
                             f"starting the provider (releasable now: {sorted(self.releasable)})")
        self.claims[login] = dict(claims)
        if self._claims_dir is not None:
            self._write_claims()

    def _wait_ready(self, timeout: float) -> str:
        """Read the provider's stdout until its `ready <issuer>` line."""
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                    break
                line = self.proc.stdout.readline().decode().strip()
                if line.startswith("ready "):
                    return line.split(" ", 1)[1]
                if not line and self.proc.poll() is not None:
                    where = f"; see {self.log_path}" if self.log_path else ""
                    raise OidcProviderError(f"the OpenID provider exited with {self.proc.returncode}{where}")
        raise OidcProviderError(f"the OpenID provider did not say `ready` in {timeout:.0f} s")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        try:
            stop_process(proc)   # SIGTERM, which the provider answers by closing its server and exiting
        finally:
            if proc is not None and proc.stdout:
                proc.stdout.close()
            if self._claims_dir is not None:
                shutil.rmtree(self._claims_dir, ignore_errors=True)
                self._claims_dir = None

    def __enter__(self) -> OidcProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _toml_string(value: str) -> str:
    return json.dumps(value)   # a JSON string is a valid TOML basic string


def auth_secrets(provider: OidcProvider, redirect_uri: str, cookie_secret: str) -> str:
    """The `[auth]` block of a Streamlit secrets file that signs in through `provider`.

    `redirect_uri` is the app's own `<origin>/oauth2callback`, and the app must be opened at that very
    origin (Streamlit compares it with the browser's); `{port}` in it stands for the server's port.
    """
    if not redirect_uri.endswith("/oauth2callback"):
        raise ValueError(f"Streamlit's redirect_uri ends with /oauth2callback, not {redirect_uri!r}")
    lines = ["[auth]", f"redirect_uri = {_toml_string(redirect_uri)}",
             f"cookie_secret = {_toml_string(cookie_secret)}", f"client_id = {_toml_string(provider.client_id)}",
             f"client_secret = {_toml_string(provider.client_secret)}",
             f"server_metadata_url = {_toml_string(provider.metadata_url)}"]
    return "\n".join(lines) + "\n"
