"""The served stack: two app processes behind nginx on one embedded PostgreSQL, as deploy/stack.py starts it.

Both processes answer through nginx, a browser keeps to one process, a lock-in made through one
process is on the page served by the other, and the load test's websocket sessions work through nginx.
"""
from __future__ import annotations

import re
import shutil
import urllib.request

import pytest

from bench.load_ws import StoreAnswers, drive, run_blocking
from bench.stack import NGINX, Stack
from tests.browser import start_drill, wait_for_app

pytestmark = pytest.mark.browser
BACKEND_HEADER = "X-Faultlines-Backend"


@pytest.fixture(scope="module")
def stack():
    if shutil.which(NGINX) is None:
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (apt-get install nginx)")
    with Stack(2) as running:
        yield running


def _backend_for(url: str, cookie: str) -> str:
    request = urllib.request.Request(f"{url}/", headers={"Cookie": f"fl_backend={cookie}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return response.headers[BACKEND_HEADER]


def _cookies_per_backend(stack) -> dict[str, str]:
    """One sticky-cookie value that nginx sends to each app process."""
    found: dict[str, str] = {}
    for n in range(64):
        found.setdefault(_backend_for(stack.url, f"probe-{n}"), f"probe-{n}")
        if len(found) == len(stack.app_ports):
            break
    return found


def test_both_processes_answer_through_nginx_and_a_browser_stays_on_one(stack):
    per_backend = _cookies_per_backend(stack)
    assert sorted(per_backend) == sorted(f"127.0.0.1:{port}" for port in stack.app_ports)
    for backend, cookie in per_backend.items():
        assert {_backend_for(stack.url, cookie) for _ in range(5)} == {backend}, "the cookie pins the process"
    with urllib.request.urlopen(f"{stack.url}/", timeout=10) as response:   # a new browser gets its cookie
        assert re.match(r"fl_backend=\w+; Path=/", response.headers["Set-Cookie"])


def _get(url: str, cookie: str | None = None):
    request = urllib.request.Request(url, headers={"Cookie": f"fl_backend={cookie}"} if cookie else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers, response.read()


def test_a_fresh_browsers_first_requests_come_from_nginx_and_each_still_gets_its_own_cookie(stack):
    """A class arriving at once: the page shell, the icon and the host config are the same for everyone, so nginx
    answers them from its cache; a first visit still gets a sticky cookie of its own, and a browser that has one
    is answered by its own process (its reload, the tests' pinning)."""
    first = [_get(f"{stack.url}/") for _ in range(3)]
    assert all(status == 200 and b"<html" in body.lower() for status, _, body in first)
    assert [headers["X-Faultlines-Cache"] for _, headers, _ in first[1:]] == ["HIT", "HIT"]
    cookies = {headers["Set-Cookie"] for _, headers, _ in first}
    assert len(cookies) == 3 and all(re.match(r"fl_backend=\w+; Path=/", c) for c in cookies)
    _, pinned, body = _get(f"{stack.url}/", "probe-0")
    assert pinned["X-Faultlines-Cache"] == "BYPASS" and pinned[BACKEND_HEADER] and body == first[0][2]
    assert "Set-Cookie" not in pinned
    for path in ("/favicon.png", "/_stcore/host-config"):
        answers = [_get(f"{stack.url}{path}", "probe-1") for _ in range(2)]
        assert [status for status, _, _ in answers] == [200, 200]
        assert answers[1][1]["X-Faultlines-Cache"] == "HIT" and answers[0][2] == answers[1][2]
    _, health, _ = _get(f"{stack.url}/_stcore/health")   # the health check and its XSRF cookie stay live
    assert "X-Faultlines-Cache" not in health and "_streamlit_xsrf" in " ".join(health.get_all("Set-Cookie"))


def _pinned_page(chromium, stack, cookie: str):
    context = chromium.new_context(viewport={"width": 1300, "height": 1000})
    context.add_cookies([{"name": "fl_backend", "value": cookie, "url": stack.url}])
    page = context.new_page()
    page.set_default_timeout(30000)
    return context, page


def test_a_lock_in_through_one_process_shows_through_the_other(stack, chromium):
    (first_backend, first_cookie), (second_backend, second_cookie) = _cookies_per_backend(stack).items()
    first_context, first = _pinned_page(chromium, stack, first_cookie)
    second_context, second = _pinned_page(chromium, stack, second_cookie)
    try:
        token = start_drill(first, stack.url, "One Tenant Takes Everyone Down", handle="stack-ada")
        response = first.goto(f"{stack.url}/drill?attempt={token}&part=board")
        assert response.headers[BACKEND_HEADER.lower()] == first_backend
        wait_for_app(first)
        box = first.get_by_label(re.compile(r"^Best guess")).first
        box.fill("12.5")
        box.press("Enter")
        first.get_by_text("Your guess:").first.wait_for()

        response = second.goto(f"{stack.url}/drill?attempt={token}&part=board")
        assert response.headers[BACKEND_HEADER.lower()] == second_backend
        wait_for_app(second)
        second.get_by_text("Your guess:").first.wait_for()
        assert "12.5" in second.get_by_text("Your guess:").first.inner_text()
        assert second.get_by_text("stack-ada").count() >= 1   # the sidebar found the attempt too
    finally:
        first_context.close()
        second_context.close()


def test_websocket_sessions_lock_in_through_nginx(stack):
    """bench_load drives its sessions through nginx: the websocket upgrade and the sticky cookie must pass."""
    with StoreAnswers(stack.database) as stored:
        results = run_blocking(drive(stack.url, 2, 90, 0.2, stored, lockins=1))
    assert [(r.error, r.acknowledged, r.stored) for r in results] == [("", 1, 1)] * 2
