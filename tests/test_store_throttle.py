"""The throttles on guessable secrets, on both stores: they slow whoever guesses and never lock an owner out.

The README's policy, in its own numbers (written here as numbers, never read from the code): a wrong try counts
for an hour; a browser's first 5 wrong tries are free, then it waits 2 s, 4 s, 8 s ... up to 15 minutes; an
address gets 20 free; a secret takes 100 wrong tries an hour from strangers, but never holds up a browser that
has opened it before. Time moves only by the injected clock.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from drills.backends import open_store
from drills.store.throttle import Client, Throttled, TryKind
from tests.clock import FakeClock
from tests.test_store_contract import ROOT, opened, target  # noqa: F401  (fixtures: each test on both stores)

ATTACKER = Client("cookie:mallory", "198.51.100.7")


def _wrong(store, handle: str, client: Client, n: int = 0) -> bool:
    return store.check_resume_code(handle, f"WRNG-{n:04d}", client=client)


def _wait_and_fail(store, clock: FakeClock, client: Client, tries: int, handle: str = "ada") -> list[float]:
    """`tries` wrong codes from `client`, each made as soon as the throttle allows: the waits it was told."""
    waits = []
    for n in range(tries):
        wait = store.throttle_wait(TryKind.RESUME, f"{handle}", client)
        waits.append(wait)
        clock.t += wait
        assert _wrong(store, handle, client, n) is False
    return waits


def test_ten_wrong_tries_from_one_browser_never_stop_the_owners_right_code_from_another(opened):
    clock = FakeClock()
    store = opened(clock)
    code = store.claim_handle("ada", "")
    waits = _wait_and_fail(store, clock, ATTACKER, 10)
    assert waits == [0, 0, 0, 0, 0, 2, 4, 8, 16, 32], "5 free, then each wait twice the last, from 2 s"
    with pytest.raises(Throttled, match="from this browser"):
        _wrong(store, "ada", ATTACKER)
    assert store.check_resume_code("ada", code, client=Client("cookie:ada-laptop", "198.51.100.7")), \
        "the owner's fresh browser on the attacker's own network gets in"
    assert store.check_resume_code("ada", code, client=Client("cookie:ada-phone", "203.0.113.9"))
    assert store.failed_tries_since(None) == {"resume": 10}


def test_a_browsers_waits_double_up_to_15_minutes_and_a_try_is_allowed_again_after_each(opened):
    clock = FakeClock()
    store = opened(clock)
    store.claim_handle("ada", "")
    waits = _wait_and_fail(store, clock, ATTACKER, 15)
    assert waits == [0] * 5 + [2, 4, 8, 16, 32, 64, 128, 256, 512, 900], "doubling, capped at 900 s"
    clock.t += 899
    with pytest.raises(Throttled) as refused:
        _wrong(store, "ada", ATTACKER)
    assert refused.value.wait_s == 1 and "Try again in 1 s" in str(refused.value)
    clock.t += 1
    assert _wrong(store, "ada", ATTACKER) is False, "allowed again once the wait is over"


def test_wrong_tries_count_for_an_hour_then_are_forgotten(opened):
    clock = FakeClock()
    store = opened(clock)
    store.claim_handle("ada", "")
    _wait_and_fail(store, clock, ATTACKER, 14)
    assert store.throttle_wait(TryKind.RESUME, "ada", ATTACKER) == 900
    clock.t += 900
    assert _wait_and_fail(store, clock, ATTACKER, 1) == [0]
    assert store.throttle_wait(TryKind.RESUME, "ada", ATTACKER) == 900, "15 in the last hour: the wait stays long"
    clock.t += 3600
    assert _wait_and_fail(store, clock, ATTACKER, 6) == [0] * 5 + [2], "an hour after the last, 5 free tries again"


def test_a_browser_is_counted_across_handles_so_guessing_many_gains_nothing(opened):
    clock = FakeClock()
    store = opened(clock)
    for n, handle in enumerate(["ada", "bea", "cy", "dee", "eve"]):
        store.claim_handle(handle, "")
        assert _wrong(store, handle, ATTACKER, n) is False
    with pytest.raises(Throttled, match="from this browser"):
        _wrong(store, "fay", ATTACKER)


def test_an_address_has_20_free_wrong_tries_then_waits_but_a_known_browser_there_never_does(opened):
    clock = FakeClock()
    store = opened(clock)
    code = store.claim_handle("ada", "")
    laptop = Client("cookie:ada-laptop", "198.51.100.7")
    assert store.check_resume_code("ada", code, client=laptop), "the owner opened it once from this browser"
    for n in range(20):   # a fresh browser each try, as an attacker who clears cookies
        assert _wrong(store, "ada", Client(f"cookie:fresh-{n}", "198.51.100.7"), n) is False
    with pytest.raises(Throttled, match="from your network address") as refused:
        _wrong(store, "ada", Client("cookie:fresh-20", "198.51.100.7"))
    assert refused.value.wait_s == 2
    assert _wrong(store, "bea", Client("cookie:elsewhere", "203.0.113.9")) is False, "another address is not held up"
    assert store.check_resume_code("ada", code, client=laptop), "nor is the owner's own browser on that network"
    clock.t += 2
    assert _wrong(store, "ada", Client("cookie:fresh-21", "198.51.100.7")) is False, "allowed again after 2 s"


def test_a_secret_takes_100_wrong_tries_an_hour_from_strangers_and_still_opens_for_its_owner(opened):
    clock = FakeClock()
    store = opened(clock)
    code = store.claim_handle("ada", "")
    laptop = Client("cookie:ada-laptop", "203.0.113.1")
    assert store.check_resume_code("ada", code, client=laptop)
    first = clock.t
    for n in range(100):   # a botnet: every try from a browser and an address of its own
        assert _wrong(store, "ada", Client(f"cookie:bot-{n}", f"10.0.{n // 250}.{n % 250}"), n) is False
        clock.t += 1
    stranger = Client("cookie:bot-new", "10.9.9.9")
    with pytest.raises(Throttled, match="at this secret") as refused:
        _wrong(store, "ada", stranger)
    assert refused.value.wait_s == first + 3600 - clock.t, "until the oldest of the 100 is an hour old"
    assert store.check_resume_code("ada", code, client=laptop), "the owner's browser is never held up"
    assert _wrong(store, "bea", stranger) is False, "nor is any other handle"
    clock.t = first + 3600
    assert _wrong(store, "ada", stranger, 1) is False, "allowed again once the oldest wrong try is an hour old"


def test_join_codes_are_throttled_per_browser_with_no_ceiling_over_every_class(opened):
    clock = FakeClock()
    store = opened(clock)
    info, join = store.create_class("SRE cohort 7", "prof@school.edu")
    for n in range(5):
        assert store.class_by_join_code(f"wrong-{n}", ATTACKER) is None
    with pytest.raises(Throttled, match="from this browser"):
        store.class_by_join_code(join, ATTACKER)
    for n in range(150):   # far past any ceiling: join tries have none, so strangers cannot block every link
        store.class_by_join_code(f"wrong-{n}", Client(f"account:{n}", f"10.1.{n // 250}.{n % 250}"))
    assert store.class_by_join_code(join, Client("account:ana", "203.0.113.5")).cohort == info.cohort


def test_a_refused_try_records_nothing_and_the_check_is_not_run(opened):
    clock = FakeClock()
    store = opened(clock)
    for n in range(5):
        store.attempt_secret(TryKind.INSTRUCTOR, "passphrase", lambda: False, client=ATTACKER)
    checked = []
    with pytest.raises(Throttled):
        store.attempt_secret(TryKind.INSTRUCTOR, "passphrase", lambda: checked.append(1) or True, client=ATTACKER)
    assert checked == [] and store.failed_tries_since(None) == {"instructor": 5}


_GUESSER = """
import sys, threading
from drills.store.throttle import Client, Throttled, TryKind
from drills.backends import open_store

store = open_store(sys.argv[1], clock=lambda: 1_790_000_000.0)   # frozen: no wait ever runs out meanwhile
barrier, outcomes = threading.Barrier(8), []

def guess(n):
    barrier.wait()
    for k in range(3):
        client = Client(f"cookie:{sys.argv[2]}-{n}-{k}", "198.51.100.7")   # a fresh browser every try, one address
        try:
            outcomes.append(store.attempt_secret(TryKind.INSTRUCTOR, "passphrase", lambda: False, client=client))
        except Throttled:
            outcomes.append("throttled")

threads = [threading.Thread(target=guess, args=(n,)) for n in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(sum(o == "throttled" for o in outcomes), sum(o is False for o in outcomes))
"""


def test_parallel_guesses_from_three_processes_share_one_address_count(pg_url):
    """3 processes of 8 threads, 72 wrong passphrases from fresh browsers at one address, all at once: the
    address's 20 free tries are counted in PostgreSQL across the processes, so exactly 20 are checked."""
    store = open_store(pg_url)   # migrate once, before the guessers race
    store.close()
    runs = [subprocess.Popen([sys.executable, "-c", _GUESSER, pg_url, f"p{p}"], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True) for p in range(3)]
    outputs = [run.communicate(timeout=120)[0].split() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    refused, wrong = (sum(int(o[i]) for o in outputs) for i in (0, 1))
    assert (wrong, refused) == (20, 72 - 20)
    store = open_store(pg_url)
    try:
        assert store.failed_tries_since(None) == {"instructor": 20}
    finally:
        store.close()
