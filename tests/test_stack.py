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
