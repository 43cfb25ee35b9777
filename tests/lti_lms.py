"""A course on an LTI 1.3 platform the project did not write: lti1p3platform (PyPI), served on 127.0.0.1.

The platform's own classes do the platform's work: its registration of our tool, its key set, its OIDC login
initiation, its signed launch (LtiResourceLinkRequest and LtiDeepLinkingRequest with the AGS and NRPS claims),
its OAuth2 client-credentials token endpoint (checking the tool's signed assertion against the tool's own
JWKS), its AGS score endpoint and NRPS membership endpoint (checking the bearer token and its scopes), and its
check of the tool's deep linking response. What is ours is the glue a platform must supply (a Flask app for
the routes, a request adapter, where scores and members live) and the test's knobs: extra claims the
platform's launch lets an LMS add (set_extra_claims, which a test uses to bend aud or deployment_id), the id
token's lifetime, a key that is not the published one, and an outage switch for its AGS and NRPS endpoints.
"""
from __future__ import annotations

import json
import re
import threading
import typing as t
from contextlib import contextmanager
from html import unescape
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, Response, jsonify, redirect, request
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService
from lti1p3platform.membership import Context
from werkzeug.serving import make_server

from deploy.lti.app import create_app
from deploy.lti.keys import add_key
from deploy.lti.settings import load_settings
from drills.backends import open_store

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
LEARNER, INSTRUCTOR = LIS + "Learner", LIS + "Instructor"
CLIENT_ID, DEPLOYMENT_ID, COURSE = "fl-tool", "dep-1", "course-42"
LINEITEM = "lineitem-1"
MEMBERS = {"learner-1": {"name": "Ada Lovelace", "email": "ada@example.org", "roles": [LEARNER]},
           "teacher-1": {"name": "Grace Hopper", "email": "grace@example.org", "roles": [INSTRUCTOR]}}
CLAIM_DEPLOYMENT = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"


def pem_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


class FlaskPlatformRequest(Request):
    """lti1p3platform's request, read from Flask's."""

    def build_metadata(self, req) -> TRequest:
        return {"method": req.method, "form_data": req.form.to_dict(), "get_data": req.args.to_dict(),
                "headers": req.headers, "content_type": req.content_type, "path": req.path,
                "json": req.get_json(silent=True)}


class _SignsWithAnotherKey(Registration):
    """A registration that signs with a key other than the one it publishes, under the published kid."""

    def __init__(self, base: Registration, private_pem: str):
        self.__dict__.update(base.__dict__)
        self._kid = base.get_kid()
        self._platform_private_key = private_pem

    def get_kid(self):
        return self._kid


class Course:
    """The platform, one course in it, its members and gradebook; `with Course(...) as lms` serves it."""

    def __init__(self, title: str = "Systems 101"):
        self.private_pem, self.public_pem = pem_pair()
        self.title = title
        self.members: dict[str, dict] = {}       # user id -> name, email, roles
        self.scores: list[dict] = []             # every score the AGS endpoint accepted, in order
        self.deep_link_items: list[list[dict]] = []   # content items of each accepted deep linking response
        self.down = False                        # the AGS score and NRPS endpoints answer 503 while True
        self.extra_claims: dict[str, t.Any] = {}   # added to the next launch (a test bends one claim)
        self.id_token_expiration = 5 * 60
        self.stranger_pem: str | None = None     # sign the next launch with this key under the published kid
        self.custom: dict[str, str] = {"drill": "one_tenant"}
        self._server = make_server("127.0.0.1", 0, self._app(), threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self.issuer = self.url
        self.tool_url = ""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Course:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)

    # -- what the tool's settings get, and what the platform keeps about the tool ------------------
    def tool_registration(self) -> dict:
        """This platform as an entry of the tool's settings (deploy.lti.settings)."""
        return {"issuer": self.issuer, "client_id": CLIENT_ID, "deployment_ids": [DEPLOYMENT_ID],
                "key_set_url": self.url + "/jwks", "auth_login_url": self.url + "/auth",
                "auth_token_url": self.url + "/token"}

    def registration(self) -> Registration:
        base = self.tool_url.rstrip("/")
        return (Registration().set_iss(self.issuer).set_client_id(CLIENT_ID).set_deployment_id(DEPLOYMENT_ID)
                .set_launch_url(base + "/launch").set_deeplink_launch_url(base + "/launch")
                .set_oidc_login_url(base + "/login").set_tool_key_set_url(base + "/jwks")
                .set_platform_public_key(self.public_pem).set_platform_private_key(self.private_pem))

    def config(self) -> LTI1P3PlatformConfAbstract:
        course = self

        class Conf(LTI1P3PlatformConfAbstract):
            def init_platform_config(self, **kwargs):
                self._registration = course.registration()

            def get_registration_by_params(self, **kwargs):
                return course.registration()

        return Conf()

    def lineitem_url(self) -> str:
        return f"{self.url}/lineitems/{LINEITEM}"

    # -- the platform's routes ---------------------------------------------------------------------
    def _app(self) -> Flask:
        app = Flask("lti1p3platform-course")
        course = self

        class Login(OIDCLoginAbstract):
            def set_lti_message_hint(self, **kwargs):
                self._lti_message_hint = kwargs["hint"]

            def get_redirect(self, url):
                return redirect(url)

        class Launch(LTIAdvantageMessageLaunchAbstract):
            def prepare_launch(self, preflight_response, **kwargs):
                user = preflight_response["login_hint"]
                member = course.members[user]
                self.set_user_data(user, member["roles"], member["name"], member["email"])
                self.set_launch_context_claim(COURSE, context_title=course.title)
                self.set_resource_link_claim("link-1", title="One Tenant")
                self.set_custom_parameters_claim(dict(course.custom))
                self.set_ags(lineitems_url=course.url + "/lineitems", lineitem_url=course.lineitem_url())
                self.set_nrps(course.url + "/memberships")
                self.set_id_token_expiration(course.id_token_expiration)
                if course.extra_claims:
                    self.set_extra_claims(dict(course.extra_claims))
                if course.stranger_pem:
                    self._registration = _SignsWithAnotherKey(self._registration, course.stranger_pem)

            def render_launch_form(self, launch_data, **kwargs):
                # The platform's own template (framework/templates/launch.html) needs Jinja; the same form:
                from html import escape
                return ("<!doctype html><form method=post id=form action='" + escape(launch_data["launch_url"]) +
                        "'><input type=hidden name=id_token value='" + escape(launch_data["id_token"]) + "'>"
                        "<input type=hidden name=state value='" + escape(launch_data["state"]) + "'></form>"
                        "<script>document.getElementById('form').submit()</script>")

        class Grades(AssignmentsGradesService):
            def update_score(self, line_item_id, score):
                course.scores.append({"lineitem": line_item_id, **score})
                return UpdateScoreStatus.SUCCESS

            def find_lineitems(self, *a, **k):
                return {"content": [{"id": course.lineitem_url(), "label": "One Tenant", "scoreMaximum": 1}],
                        "has_next": False, "next": None}

            def find_lineitem(self, line_item_id):
                return {"id": course.lineitem_url(), "label": "One Tenant", "scoreMaximum": 1}

            def create_lineitem(self, creation_data):
                raise NotImplementedError

            def update_lineitem(self, update_data):
                raise NotImplementedError

            def delete_lineitem(self, line_item_id):
                raise NotImplementedError

            def get_results(self, *a, **k):
                return {"content": [], "has_next": False, "next": None}

        class Members(NamesRoleProvisioningService):
            def get_member_data_page(self, page=1, limit=None, role=None, since=None, **kwargs):
                content = [{"user_id": uid, "name": m["name"], "email": m["email"], "roles": m["roles"],
                            "status": m.get("status", "Active")} for uid, m in course.members.items()]
                return {"content": content, "has_next": False, "next": None}

            def get_context_by_id(self):
                return Context(id=COURSE, label="SYS101", title=course.title)

        def reply(response):
            return Response("" if response.result is None else json.dumps(response.result),
                            status=response.code, content_type=response.media_type)

        @app.get("/course")
        def course_page():
            """The course as a member sees it: the tool's link opened inside the LMS page's frame."""
            from html import escape
            from urllib.parse import quote
            return (f"<!doctype html><title>{escape(course.title)}</title><h1>{escape(course.title)}</h1>"
                    f"<iframe id=tool title='Fault Lines' src='/start?user={quote(request.args['user'])}' "
                    "style='width:1250px;height:900px'></iframe>")

        @app.get("/jwks")
        def jwks():
            conf = course.config()
            conf.get_registration()
            return jsonify(conf.get_jwks())

        @app.get("/start")
        def start():
            """An LMS user opening the tool's link (or, with ?deep_link=1, adding the tool to the course)."""
            login = Login(FlaskPlatformRequest(request), course.config())
            if request.args.get("deep_link"):
                login.set_deeplinking_launch_url()
            login.set_lti_message_hint(hint="deep-link" if request.args.get("deep_link") else "link-1")
            return login.initiate_login(request.args["user"])

        @app.route("/auth", methods=["GET", "POST"])
        def auth():
            launch = Launch(FlaskPlatformRequest(request), course.config())
            hint = (request.args.get("lti_message_hint") or request.form.get("lti_message_hint"))
            if hint == "deep-link":
                launch.set_dl(course.url + "/deep_link_return", title="Fault Lines")
            return launch.lti_launch()

        @app.post("/token")
        def token():
            conf = course.config()
            conf.get_registration()
            try:
                return jsonify(conf.get_access_token(request.form.to_dict()))
            except Exception as error:   # the platform's refusals are bare exceptions
                return jsonify({"error": "invalid_client", "error_description": str(error)}), 400

        @app.post("/lineitems/<item>/scores")
        def scores(item):
            if course.down:
                return "the gradebook is down", 503
            service = Grades(FlaskPlatformRequest(request), course.config(), course.url + "/lineitems",
                             course.lineitem_url())
            service.platform_config.get_registration()
            return reply(service.handle_resp(service.handle_update_score, line_item_id=item))

        @app.get("/memberships")
        def memberships():
            if course.down:
                return "the LMS is down", 503
            service = Members(FlaskPlatformRequest(request), course.config(), course.url + "/memberships")
            service.platform_config.get_registration()
            return reply(service.handle_resp(service.handle_get_members))

        @app.post("/deep_link_return")
        def deep_link_return():
            conf = course.config()
            conf.get_registration()
            items = conf.validate_deeplinking_resp(request.form.to_dict())
            course.deep_link_items.append(items)
            return "<p id=added>Added to the course</p>"

        return app


# -- the test's side: serving the tool beside the course, and a member's browser ---------------------
class Clock:
    """The store's clock, moved by the test (the tokens the platform signs keep the wall clock)."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def tool_key(tmp_path_factory):
    """One tool key per module (RSA generation is the slow part), copied into each test's key folder."""
    folder = tmp_path_factory.mktemp("tool-key")
    return folder / f"{add_key(folder, now=1_700_000_000)}.pem"


@contextmanager
def course_with_tool(tmp_path, tool_key, members: dict[str, dict], clock=None, *, db=None, app_url=None):
    """(course, tool URL, store, settings): the platform with `members`, and the tool, each registered with the
    other, the tool's store on `clock` when given, in `db` (a file in tmp_path unless given), handing launches
    to the app at `app_url`."""
    store = open_store(db or tmp_path / "lti.duckdb", **({"clock": clock} if clock else {}))
    with Course() as course:
        course.members = members
        server, thread, url, settings = serve_tool(tmp_path, course, tool_key, store,
                                                   **({"app_url": app_url} if app_url else {}))
        try:
            yield course, url, store, settings
        finally:
            server.shutdown()
            thread.join(timeout=5)
            store.close()


def serve_tool(tmp_path, course: Course, tool_key, store, app_url: str = "http://127.0.0.1:8501/"):
    """The tool's side app on a free loopback port, registered with `course` and `course` with it."""
    (tmp_path / "keys").mkdir(exist_ok=True)
    (tmp_path / "keys" / tool_key.name).write_bytes(tool_key.read_bytes())
    server = make_server("127.0.0.1", 0, lambda environ, start: [], threaded=True)
    url = f"http://127.0.0.1:{server.server_port}/lti"
    settings_file = tmp_path / "lti.json"
    settings_file.write_text(json.dumps({"app_url": app_url, "tool_url": url, "key_dir": "keys",
                                         "platforms": [course.tool_registration()]}))
    settings = load_settings(settings_file)
    server.app = create_app(settings, store)
    course.tool_url = url
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread, url, settings


def launch_form(course: Course, user: str, deep_link: bool = False) -> tuple[httpx.Client, dict]:
    """Follow a member's click from the LMS through the tool's login to the platform's auto-posting launch
    form; returns the browser (its cookies) and the form (action, id_token, state)."""
    client = httpx.Client(timeout=10)
    start = client.get(course.url + "/start", params={"user": user, **({"deep_link": 1} if deep_link else {})})
    assert start.status_code == 302, start.text
    login = client.get(start.headers["location"])   # the tool's OIDC login initiation
    assert login.status_code == 302, login.text
    assert login.headers["location"].startswith(course.url + "/auth")
    auth = client.get(login.headers["location"])    # the platform's authorization: its signed launch
    assert auth.status_code == 200, auth.text
    form = {name: unescape(value) for name, value in re.findall(r"name=(\w+) value='([^']*)'", auth.text)}
    form["action"] = unescape(re.search(r"action='([^']+)'", auth.text).group(1))
    return client, form


def post(client: httpx.Client, form: dict, **changes) -> httpx.Response:
    body = {"id_token": form["id_token"], "state": form["state"], **changes}
    return client.post(form["action"], data={k: v for k, v in body.items() if v is not None})


def code_of(reply) -> str:
    link = unescape(re.search(r"id=continue href='([^']+)'", reply.text).group(1))
    return parse_qs(urlparse(link).query)["lti"][0]
