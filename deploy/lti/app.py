"""The LTI tool's Flask app: OIDC login initiation, launch and the tool's key set, under /lti/.

Run by gunicorn (`gunicorn 'deploy.lti.app:create_app()'`) behind the class's nginx. A launch is checked by
pylti1p3 (state, the id token's signature against the platform's key set, audience, expiry, deployment) and
then here once more for its nonce, in the attempt store so no process accepts a token twice. The browser then
gets a link into the app carrying a one-time code (drills.store.lti), never the identity itself.
"""
from __future__ import annotations

import html
import secrets
from pathlib import Path
from urllib.parse import urlencode

import requests
from flask import Flask, jsonify, request
from pylti1p3.contrib.flask import FlaskMessageLaunch, FlaskOIDCLogin, FlaskRequest
from pylti1p3.exception import LtiException
from pylti1p3.service_connector import ServiceConnector
from pylti1p3.tool_config import ToolConfDict

from deploy.lti import deep_link
from deploy.lti.keys import key_set, public_pem, signing_key, write_once
from deploy.lti.settings import LtiSettings, load_settings
from drills.scope import FULL, scoped_id

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
TEACHING_ROLES = {LIS + "Instructor", LIS + "Administrator", LIS + "ContentDeveloper",
                  LIS + "Instructor#TeachingAssistant"}
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
DL_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
HTTP_TIMEOUT_S = 10.0   # every call the tool makes to a platform (its key set, its token and service URLs)


class BoundedSession(requests.Session):
    """The HTTP session pylti1p3 calls platforms with, given a timeout it does not set itself."""

    def request(self, method, url, **kwargs):
        kwargs.setdefault("timeout", HTTP_TIMEOUT_S)
        return super().request(method, url, **kwargs)


def _session_secret(key_dir: Path) -> str:
    """The secret that signs Flask's session cookie, shared by every worker through the key folder."""
    path = key_dir / "session.secret"
    if not path.exists():
        key_dir.mkdir(parents=True, exist_ok=True)
        write_once(path, secrets.token_hex(32).encode())
    return path.read_text().strip()


class _Registrations(ToolConfDict):
    """pylti1p3's dictionary of registrations, answering None (a refusal) for an issuer or client it lacks
    instead of raising a bare Exception, so an unknown audience is refused like any other bad launch."""

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        known = any(p["client_id"] == client_id for p in self._config.get(iss, []))
        return super().find_registration_by_params(iss, client_id, *args, **kwargs) if known else None

    def find_deployment_by_params(self, iss, deployment_id, client_id, *args, **kwargs):
        known = any(p["client_id"] == client_id for p in self._config.get(iss, []))
        return super().find_deployment_by_params(iss, deployment_id, client_id, *args, **kwargs) if known else None


def tool_config(settings: LtiSettings) -> ToolConfDict:
    conf = _Registrations(settings.tool_conf())
    _, private = signing_key(settings.key_dir)
    for p in settings.platforms:
        conf.set_private_key(p.issuer, private, client_id=p.client_id)
        conf.set_public_key(p.issuer, public_pem(private), client_id=p.client_id)
    return conf


class Connectors:
    """pylti1p3 service connectors (each holding its access tokens) by platform and client, for one pass of the
    LMS worker; None for a registration the settings lack."""

    def __init__(self, settings: LtiSettings):
        self._conf = tool_config(settings)
        self._made: dict[tuple[str, str], ServiceConnector] = {}

    def get(self, issuer: str, client_id: str) -> ServiceConnector | None:
        if (issuer, client_id) not in self._made:
            registration = self._conf.find_registration_by_params(issuer, client_id)
            if registration is None:
                return None
            self._made[(issuer, client_id)] = ServiceConnector(registration, requests_session=BoundedSession())
        return self._made[(issuer, client_id)]

    def require(self, issuer: str, client_id: str) -> ServiceConnector:
        """The connector, or LtiException naming the registration the settings lack."""
        connector = self.get(issuer, client_id)
        if connector is None:
            raise LtiException(f"no registration for {issuer} client {client_id} in the settings")
        return connector

    def forget(self, issuer: str, client_id: str) -> None:
        """Drop a connector after a failure, so its token is asked for afresh next time."""
        self._made.pop((issuer, client_id), None)


def launch_record(data: dict) -> dict:
    """What the app needs from a validated launch: who, in which course, in which role, for which link."""
    roles = data.get(CLAIM + "roles") or []
    context = data.get(CLAIM + "context") or {}
    link = data.get(CLAIM + "resource_link") or {}
    custom = {str(k): str(v) for k, v in (data.get(CLAIM + "custom") or {}).items()}
    scope = custom.get("scope") or FULL
    # The attempts a graded link is for: the drill it names, cut to its scope (a live room takes it whole).
    drill_id = scoped_id(custom["drill"], FULL if scope == deep_link.LIVE else scope) if custom.get("drill") else ""
    endpoint = data.get("https://purl.imsglobal.org/spec/lti-ags/claim/endpoint") or {}
    return {
        "issuer": data["iss"], "client_id": data["aud"] if isinstance(data["aud"], str) else data["azp"],
        "deployment_id": data[CLAIM + "deployment_id"], "subject": data["sub"],
        "name": str(data.get("name") or ""), "email": str(data.get("email") or ""),
        "context_id": str(context.get("id") or ""), "context_title": str(context.get("title") or ""),
        "instructor": any(role in TEACHING_ROLES for role in roles),
        "resource_link_id": str(link.get("id") or ""),
        "custom": custom, "drill_id": drill_id,
        "lineitem": str(endpoint.get("lineitem") or ""),
        "ags_scopes": [str(s) for s in endpoint.get("scope") or []],
        "nrps_url": str((data.get(NRPS_CLAIM) or {}).get("context_memberships_url") or ""),
    }


def _page(status: int, title: str, body_html: str):
    return (f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<h1>{html.escape(title)}</h1>{body_html}", status, {"Content-Type": "text/html; charset=utf-8"})


def create_app(settings: LtiSettings | None = None, store=None) -> Flask:
    """The side app. `store` is the attempt store (drills.backends.open_store() when not given)."""
    settings = settings or load_settings()
    if store is None:
        from drills.backends import open_store
        store = open_store()
    signing_key(settings.key_dir)   # the first key is made at set-up, so the key set is never empty
    app = Flask(__name__)
    app.secret_key = _session_secret(settings.key_dir)
    secure = settings.tool_url.startswith("https://")
    # Inside an LMS frame every cookie of ours is third-party: only SameSite=None; Secure ones are sent back.
    app.config.update(SESSION_COOKIE_SAMESITE="None" if secure else "Lax", SESSION_COOKIE_SECURE=secure,
                      SESSION_COOKIE_NAME="fl_lti")

    def lti_request() -> FlaskRequest:
        return FlaskRequest(request_is_secure=secure)

    @app.get("/lti/jwks")
    def jwks():
        return jsonify(key_set(settings.key_dir))

    @app.route("/lti/login", methods=["GET", "POST"])
    def login():
        try:
            return FlaskOIDCLogin(lti_request(), tool_config(settings)).redirect(settings.launch_url)
        except LtiException as error:
            return _page(400, "This launch cannot start", f"<p>{html.escape(str(error))}</p>")

    @app.post("/lti/launch")
    def launch():
        try:
            message = FlaskMessageLaunch(lti_request(), tool_config(settings), requests_session=BoundedSession())
            data = message.get_launch_data()
        except LtiException as error:
            again = html.escape(settings.tool_url)
            return _page(400, "The LMS launch was refused",
                         f"<p>{html.escape(str(error))}</p><p>If your browser blocks cookies inside the LMS "
                         f"page, launch again with the LMS's &ldquo;open in a new window&rdquo; option "
                         f"(<a href='{again}' target=_blank rel=noopener>the tool</a>).</p>")
        if not store.use_lti_nonce(data["iss"], str(data.get("nonce") or ""), float(data["exp"])):
            return _page(400, "The LMS launch was refused", "<p>This launch has already been used.</p>")
        if message.is_deep_link_launch():
            record = launch_record(data)
            if not record["instructor"]:
                return _page(403, "Only a course's instructors add Fault Lines to it", "")
            return _page(200, "Add a Fault Lines drill to the course",
                         deep_link.picker_page(record, data[DL_CLAIM], settings.tool_url))
        code = store.issue_launch_code(launch_record(data))
        target = html.escape(settings.app_url.rstrip("/") + "/?" + urlencode({"lti": code}))
        return _page(200, "Fault Lines", f"<p><a id=continue href='{target}'>Continue here</a> or "
                                         f"<a id=newtab href='{target}' target=_blank rel=noopener>open in a new "
                                         f"tab</a> (the link works once, within a minute).</p>")

    @app.post("/lti/deep_link")
    def deep_link_answer():
        body, status = deep_link.answer(tool_config(settings), settings.launch_url)
        return _page(status, "Fault Lines", body)

    return app
