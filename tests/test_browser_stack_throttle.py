"""Chromium on the served stack: 8 browsers guessing the instructor passphrase through 3 app processes never stop
the instructor's right passphrase from a ninth, and every guess is counted in PostgreSQL by its browser and by
the address nginx forwards.

It used to be the other way round: after 10 wrong tries from anywhere the real instructor waited ten minutes.
(tests/test_store_throttle.py races 3 processes of 8 threads against the store's counts, on an injected clock;
here the guesses stay under every count, so no wait, and no wall clock, decides anything.)
"""
from __future__ import annotations

import shutil
import urllib.request

import psycopg

import pytest

from drills import access
from deploy.stack import NGINX, Stack
from tests.browser import wait_for_app

pytestmark = pytest.mark.browser
PASSPHRASE = "the right passphrase, at last"


def _backend_for(url: str, cookie: str) -> str:
    request = urllib.request.Request(f"{url}/", headers={"Cookie": f"fl_backend={cookie}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["X-Faultlines-Backend"]


def _cookies_over_every_process(url: str, *, browsers: int, processes: int) -> list[str]:
    """`browsers` sticky-cookie values that nginx's hash sends to all `processes` app processes between them.

    The hash is over the processes' addresses, whose ports are new every run, so fixed names can all land on
    two processes (about one run in eight for 8 names over 3). Names are tried in order, a bounded count.
    """
    by_backend: dict[str, list[str]] = {}
    for n in range(200):
        name = f"guesser-{n}"
        by_backend.setdefault(_backend_for(url, name), []).append(name)
        if len(by_backend) == processes and sum(map(len, by_backend.values())) >= browsers:
            break
    firsts = [names[0] for names in by_backend.values()]
    rest = [name for names in by_backend.values() for name in names[1:]]
    return (firsts + rest)[:browsers]


def _guess(page, passphrase: str) -> str:
    page.get_by_role("textbox", name="Your name").fill("Mallory")
    page.get_by_role("textbox", name="Instructor passphrase").fill(passphrase)
    page.get_by_role("button", name="Sign in").click()
    wait_for_app(page)
    alerts = page.get_by_test_id("stAlert")
    alerts.last.wait_for()
    return " ".join(alerts.all_inner_texts())


def _browser(chromium, url: str, cookie: str):
    context = chromium.new_context(viewport={"width": 1300, "height": 900})
    # nginx keeps a browser on one process by this cookie: the 8 are spread over all 3
    context.add_cookies([{"name": "fl_backend", "value": cookie, "url": url}])
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{url}/instructor")
    page.get_by_role("textbox", name="Instructor passphrase").wait_for(timeout=120_000)
    return context, page


def test_strangers_on_8_browsers_and_3_processes_never_stop_the_instructors_right_passphrase(chromium, monkeypatch):
    if shutil.which(NGINX) is None:
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (apt-get install nginx)")
    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase(PASSPHRASE, iterations=1_000))
    with Stack(3) as stack:
        cookies = _cookies_over_every_process(stack.url, browsers=9, processes=3)
        opened = [_browser(chromium, stack.url, cookie) for cookie in cookies[:8]]
        said = [_guess(page, f"guess {n}.{k}") for k in range(2) for n, (_, page) in enumerate(opened)]
        owner_context, owner = _browser(chromium, stack.url, cookies[8])
        late = _guess(owner, PASSPHRASE)
        owner.get_by_role("button", name="Sign out").wait_for()
        backends = {_backend_for(stack.url, cookie) for cookie in cookies}
        for context, _ in [*opened, (owner_context, None)]:
            context.close()
        with psycopg.connect(stack.database) as conn:
            counted = conn.execute("SELECT address, COUNT(DISTINCT browser), COUNT(*), bool_and(browser LIKE 'cookie:%') "
                                   "FROM access_tries WHERE NOT ok GROUP BY address").fetchall()
    assert all("not right" in text for text in said) and len(said) == 16, said
    assert "Too many wrong tries" not in late, late
    assert counted == [("127.0.0.1", 8, 16, True)], "each guess counted by its browser and the address nginx forwards"
    assert len(backends) == 3, "the guesses went through all three processes"
