"""Chromium on the served stack: 8 browsers guessing the instructor passphrase through 3 app processes share one
limit, kept in PostgreSQL.

8 browser contexts used to make 32 wrong tries a minute: the back-off slept only in the guessing session and
was counted per process. (tests/test_store_contract.py races 3 processes of 8 threads against the store itself.)
"""
from __future__ import annotations

import shutil
import urllib.request

import pytest

from drills import access
from drills.store.accounts import THROTTLE_LIMIT
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


def test_wrong_passphrases_from_8_browsers_on_3_processes_share_one_limit(chromium, monkeypatch):
    if shutil.which(NGINX) is None:
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (apt-get install nginx)")
    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase(PASSPHRASE, iterations=1_000))
    with Stack(3) as stack:
        cookies = _cookies_over_every_process(stack.url, browsers=8, processes=3)
        contexts, pages = [], []
        for cookie in cookies:
            context = chromium.new_context(viewport={"width": 1300, "height": 900})
            # nginx keeps a browser on one process by this cookie: the 8 are spread over all 3
            context.add_cookies([{"name": "fl_backend", "value": cookie, "url": stack.url}])
            page = context.new_page()
            page.set_default_timeout(90_000)
            page.goto(f"{stack.url}/instructor")
            page.get_by_role("textbox", name="Instructor passphrase").wait_for(timeout=120_000)
            contexts.append(context)
            pages.append(page)
        said = [_guess(page, f"guess {n}.{k}") for k in range(2) for n, page in enumerate(pages)]
        late = _guess(pages[0], PASSPHRASE)
        backends = {_backend_for(stack.url, cookie) for cookie in cookies}
        for context in contexts:
            context.close()
    wrong = [text for text in said if "not right" in text]
    throttled = [text for text in said if "Too many wrong tries" in text]
    assert len(wrong) == THROTTLE_LIMIT and len(throttled) == len(said) - THROTTLE_LIMIT, said
    assert "Too many wrong tries" in late, "the right passphrase waits too, from any process"
    assert len(backends) == 3, "the guesses went through all three processes"
