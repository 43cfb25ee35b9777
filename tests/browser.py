"""Helpers for browser tests: a Streamlit server on a free port and Debian's Chromium.

The server runs the real app.py (or another script) against its own DuckDB file; restart() keeps the file.
Given secrets, it reads them instead of the repo's .streamlit/secrets.toml, e.g. the `[auth]` block that
signs in through the tests' OpenID provider (tests/oidc_provider.py, docs/testing-sign-in.md).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from bench.stack import free_port, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


# The redirect_uri of a test server's `[auth]` block: Streamlit puts the server's own port for `{port}`,
# so one block serves every AppServer. The browser must open the app at this same origin (AppServer.url).
LOOPBACK_REDIRECT_URI = "http://127.0.0.1:{port}/oauth2callback"


class AppServer:
    """`streamlit run app.py` in a subprocess; stop() kills it like a crash, start() brings it back.

    `script` runs another file of the repo instead of app.py; `secrets` (TOML text) is written beside
    the database and read instead of .streamlit/secrets.toml (through Streamlit's `secrets.files`,
    which then reads no other file: `secrets=""` is a server with no secrets at all); `env` adds
    environment variables; `port` fixes the port (default: a free one).
    """

    def __init__(self, db_path: Path, env: dict[str, str] | None = None, *, script: str = "app.py",
                 secrets: str | None = None, port: int | None = None):
        self.db_path = db_path
        self.port = port or free_port()
        self.extra_env = env or {}
        self.script = script
        self.secrets = secrets
        self.proc: subprocess.Popen | None = None
        self.log_path = db_path.with_suffix(".server.log")
        self.secrets_path = db_path.with_suffix(".secrets.toml")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        env = {**os.environ, "FAULTLINES_DB": str(self.db_path), **self.extra_env}
        secrets_flag = []
        if self.secrets is not None:
            self.secrets_path.write_text(self.secrets)
            secrets_flag = ["--secrets.files", str(self.secrets_path)]
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", self.script, "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *secrets_flag],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        wait_healthy(self.url, self.proc, self.log_path, timeout)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def wait_for_app(page, timeout_ms: int = 30000) -> None:
    """Wait until Streamlit has finished a script run (no 'running' indicator) after any action. After a goto or a
    reload that is the page's first run: stApp's run state says 'initial' until it begins, and the status widget
    shows 'Running' only a moment into a run, so on a busy machine the widget alone let a test read a page whose
    first run was still drawing (and then redrew what the test had read)."""
    page.wait_for_selector("[data-testid=stApp]", timeout=timeout_ms)
    page.wait_for_function(
        "() => { const app = document.querySelector('[data-testid=stApp]');"
        " const status = document.querySelector('[data-testid=stStatusWidget]');"
        " return !!app && app.dataset.testScriptState !== 'initial'"
        " && app.dataset.testScriptState !== 'running'"
        " && !(status && status.innerText.includes('Running')); }",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(300)


def start_drill(page, url: str, title: str, handle: str = "browser-ada", code: str = "") -> str:
    """Open the catalogue, start the drill called `title` as `handle` (with its resume code when the handle was
    used before), and return the attempt's URL token."""
    page.goto(url)
    page.get_by_role("textbox", name="Your handle").wait_for(timeout=120_000)  # a cold server imports every page
    wait_for_app(page)
    page.get_by_role("textbox", name="Your handle").fill(handle)
    if code:
        page.get_by_role("textbox", name="Resume code, if used before").fill(code)
    page.get_by_role("button", name=f"Start the clock: {title}").click()
    page.wait_for_url(re.compile(r".*attempt=.*"))
    wait_for_app(page)
    return re.search(r"attempt=([^&]+)", page.url).group(1)


LOCK_IN = "Lock in"
NOTES_ANSWER = "Per-tenant signals first; then limits at each shared layer; recover, then prevent."
ANSWERED_MS = 30_000   # bounds a press nobody answers (then the test fails); it times no step


def open_lock_ins(page) -> int:
    return page.get_by_role("button", name=LOCK_IN, exact=True).count()


def wait_for_run_done(page, timeout_ms: int = 30000) -> None:
    """Once the page shows something the run answering a press drew: wait until that run has finished (Streamlit's
    own run state on stApp, which a run sets before its first element reaches the page) and no widget is still
    loading its code. Only after such an outcome: just after a press its run may not have begun, and the state
    still says the last run finished (wait_for_app is for that case)."""
    page.wait_for_function(
        "() => { const app = document.querySelector('[data-testid=stApp]');"
        " return !!app && app.dataset.testScriptState === 'notRunning'"
        " && app.dataset.testConnectionState === 'CONNECTED'"
        " && !document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]'); }",
        timeout=timeout_ms,
    )


def lock_in(page, loaded, question) -> None:
    """Answer `question` in the first open lock-in form (questions render in drill order), press Lock in once,
    and wait for the form to go. A press the page does not answer fails, with what the page said instead."""
    from drills.schema import ChoiceQuestion, NumericQuestion

    page.get_by_role("button", name=LOCK_IN, exact=True).first.wait_for()
    wait_for_run_done(page)   # the run drawing the part's forms has drawn them all
    before = open_lock_ins(page)
    form = page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name=LOCK_IN, exact=True)).first
    if isinstance(question, NumericQuestion):
        guess = loaded.values.get(question.id, 100.0)  # simulation truths vary by seed; any guess will do
        box = form.get_by_label(f"Best guess ({question.unit})")
        box.fill(f"{guess:.4g}")
        box.press("Enter")
    elif isinstance(question, ChoiceQuestion):
        right = next(o.text for o in question.options if o.id == question.answer)
        form.get_by_text(loaded.text(right), exact=True).click()
        form.get_by_role("button", name=LOCK_IN, exact=True).click()
    else:
        form.get_by_label("Your notes").fill(NOTES_ANSWER)
        form.get_by_role("button", name=LOCK_IN, exact=True).click()
    try:
        page.wait_for_function(
            "n => [...document.querySelectorAll('button')].filter(b => b.innerText.includes('Lock in')).length < n",
            arg=before, timeout=ANSWERED_MS)
    except Exception:
        alerts = page.get_by_test_id("stAlert").all_inner_texts()
        raise AssertionError(f"{question.id}: one Lock in press was not answered ({open_lock_ins(page)} of "
                             f"{before} forms still open; the page said {alerts})") from None
    wait_for_run_done(page)   # the form went in the run answering the press: wait for that run's end


def finish_attempt(page) -> None:
    """Press Finish on the last step, ticking "Finish anyway" first when the page asks for it (questions
    still open, or notes answers not yet self-rated)."""
    wait_for_app(page)
    confirm = page.get_by_text("Finish anyway", exact=True)
    if confirm.count():
        confirm.click()
        wait_for_app(page)
    page.get_by_role("button", name="Finish and see results").click()



def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class _CallbackWatch:
    """Notes when the browser reaches the app's /oauth2callback, where every provider round trip ends.

    Listening from before the click means a round trip too fast to watch by URL is never missed.
    """

    def __init__(self, page):
        self.page, self.origin, self.seen = page, _origin(page.url), False
        page.on("response", self._on_response)

    def _on_response(self, response) -> None:
        if _origin(response.url) == self.origin and urlsplit(response.url).path.endswith("/oauth2callback"):
            self.seen = True

    def wait_back(self, timeout_ms: int, confirm: str | None = None) -> None:
        """Wait for the callback (pressing a `confirm` button on the way if the provider shows one),
        then for the app's own page at its origin to have run."""
        step_ms, waited = 100, 0
        try:
            while not self.seen:
                if waited > timeout_ms:
                    raise TimeoutError(f"the provider did not send the browser back to {self.origin} "
                                       f"in {timeout_ms} ms; it is at {self.page.url}")
                if confirm and _origin(self.page.url) != self.origin:
                    button = self.page.get_by_role("button", name=confirm)
                    if button.count() and button.is_visible():
                        button.click()
                self.page.wait_for_timeout(step_ms)
                waited += step_ms
        finally:
            self.page.remove_listener("response", self._on_response)
        self.page.wait_for_url(lambda url: _origin(url) == self.origin
                               and not urlsplit(url).path.endswith("/oauth2callback"), timeout=timeout_ms)
        wait_for_app(self.page, timeout_ms)


def sign_in_through_provider(page, login: str, *, button: str | re.Pattern = "Sign in",
                             password: str = "any password", timeout_ms: int = 30000) -> None:
    """Sign in as `login` through the tests' OpenID provider (tests/oidc/provider.mjs) and wait for the app.

    On an app page that shows a sign-in button (named `button`, calling st.login), click it, fill the
    provider's development login form (it takes any login and any password), press its Sign-in,
    confirm a consent screen if one is shown, and wait until the app has run again at its own origin.
    """
    watch = _CallbackWatch(page)
    page.get_by_role("button", name=button).click()
    page.locator("input[name=login]").fill(login, timeout=timeout_ms)
    page.locator("input[name=password]").fill(password)
    page.get_by_role("button", name="Sign-in").click()
    watch.wait_back(timeout_ms, confirm="Continue")


def sign_out_through_provider(page, *, button: str | re.Pattern = "Sign out", timeout_ms: int = 30000,
                              within=None) -> None:
    """Press the app's sign-out button (calling st.logout; the one `within` a locator, when the page shows two)
    and wait until the provider, having ended its own session, has sent the browser back to the app (Streamlit
    clears its cookies on the way out)."""
    watch = _CallbackWatch(page)
    (within or page).get_by_role("button", name=button).click()
    watch.wait_back(timeout_ms, confirm="Yes, sign me out")


def sign_in_instructor(page, url: str, passphrase: str, name: str = "Prof Ada") -> None:
    """Open the scoreboard at `url` and sign in with the embedded default's passphrase; returns on the board."""
    page.goto(f"{url}/instructor")
    wait_for_app(page)
    page.get_by_label("Your name").fill(name)
    page.get_by_label("Instructor passphrase").fill(passphrase)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_test_id("stMetric").first.wait_for()
    wait_for_app(page)


def open_from_menu(page, title: str) -> None:
    """Open the app page called `title` from the navigation menu at the top (its sections drop down).

    Each section is opened once and read once its links show; a section that opens nothing fails the walk
    (a press of the menu that is not answered is a bug, not a reason to press again).
    """
    page.get_by_test_id("stTopNav").wait_for()
    sections = page.get_by_test_id("stTopNav").get_by_test_id("stTopNavSection")
    for n in range(sections.count()):
        sections.nth(n).click()
        links = page.get_by_test_id("stTopNavDropdownLink")
        links.first.wait_for(state="visible", timeout=ANSWERED_MS)
        link = links.filter(has_text=title)
        if link.count():
            link.first.click()
            wait_for_app(page)
            return
        page.keyboard.press("Escape")
        links.first.wait_for(state="hidden", timeout=ANSWERED_MS)
    raise AssertionError(f"no page called {title!r} in the menu")


def resume_code_on(page) -> str:
    """The resume code the drill page shows after a start that claimed a new handle."""
    box = page.get_by_text(re.compile(r"Your personal resume code is")).first
    box.wait_for()
    return re.search(r"[A-Z0-9]{4}-[A-Z0-9]{4}", box.inner_text()).group(0)


def without_numbers(text: str) -> str:
    """Text with its figures masked: every attempt draws its own numbers, so a walk compares the words."""
    return re.sub(r"\$?\d[\d,.]*", "#", text)
