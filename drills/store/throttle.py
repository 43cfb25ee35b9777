"""Throttles on guessable secrets (the instructor passphrase, resume codes, join codes), counted in the store.

A wrong try is counted three ways for WINDOW_S: by the browser that made it, by the network address it came
from, and at the secret it aimed at. Each count slows only what it counts: a browser's own wrong tries make
that browser wait (doubling waits after a few free ones), an address's make that address wait (it gets more
free tries: a classroom shares one), and only a ceiling far above one attacker's budget slows a secret for
everyone, and even then not for a browser that has opened it before. So strangers can slow an attacker but
never lock an owner out (OWASP ASVS 2.2.1: no more than 100 failed tries an hour at one account).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from drills.store.contract import StorePart

WINDOW_S = 3600.0        # a wrong try counts against its browser, address and secret for an hour
BROWSER_FREE = 5         # wrong tries one browser (or signed-in account) makes, at any secret of a kind, before waits
ADDRESS_FREE = 20        # wrong tries from one network address before its waits start
FIRST_WAIT_S = 2.0       # the first wait; each wrong try after it doubles the next wait ...
LONGEST_WAIT_S = 900.0   # ... up to 15 minutes
TARGET_CEILING = 100     # wrong tries at one secret in the window, from everyone, before it waits for strangers


class TryKind:
    """What a try guessed at; a throttle counts failures per kind."""

    INSTRUCTOR = "instructor"     # the embedded-default instructor passphrase (target: "passphrase")
    RESUME = "resume"             # a handle's resume code (target: the handle as people read it, and its cohort)
    JOIN = "join"                 # a class's join code (target: JOIN_TARGET, the whole space of codes)


JOIN_TARGET = "class"
# A join code is 96 bits, so a ceiling over every class would guard nothing the browser and address counts do
# not, and would let strangers hold up every join link at once: join tries have none.
_CEILINGS = {TryKind.INSTRUCTOR: TARGET_CEILING, TryKind.RESUME: TARGET_CEILING, TryKind.JOIN: None}


@dataclass(frozen=True)
class Client:
    """Who a try comes from, as the throttles count it: the browser (its cookie, or the signed-in account) and
    the network address. Either may be '' when unknown; an unknown one is not counted."""

    browser: str
    address: str


class Throttled(Exception):
    """Too many wrong tries lately from this browser or address, or at this secret: the caller shows the wait and
    stores nothing."""

    WHERE = {"browser": "from this browser", "address": "from your network address",
             "target": "at this secret from many places"}

    def __init__(self, wait_s: float, counted: str = "browser"):
        super().__init__(f"Too many wrong tries {self.WHERE[counted]} lately. Try again in {format_wait(wait_s)}.")
        self.wait_s = wait_s
        self.counted = counted


def format_wait(seconds: float) -> str:
    minutes = int(-(-seconds // 60))   # rounded up: never promise a wait shorter than the real one
    return f"{minutes} minute{'s' if minutes != 1 else ''}" if seconds > 60 else f"{max(1, int(-(-seconds // 1)))} s"


def backoff_wait(failure_times: list[float], now: float, free: int) -> float:
    """Seconds until one more try is allowed after these failures of one browser or address (0: allowed now).

    Failures older than WINDOW_S are forgotten. Fewer than `free` cost nothing; from the `free`-th on, the next
    try waits FIRST_WAIT_S after the latest failure, twice that after one more, and so on up to LONGEST_WAIT_S."""
    recent = sorted(t for t in failure_times if now - t < WINDOW_S)
    if len(recent) < free:
        return 0.0
    delay = min(LONGEST_WAIT_S, FIRST_WAIT_S * 2.0 ** min(len(recent) - free, 32))
    return max(0.0, recent[-1] + delay - now)


def ceiling_wait(failure_times: list[float], now: float, ceiling: int | None) -> float:
    """Seconds until a secret that has had `ceiling` wrong tries within WINDOW_S takes a stranger's try again:
    until the oldest of the latest `ceiling` leaves the window (0: allowed now)."""
    recent = sorted(t for t in failure_times if now - t < WINDOW_S)
    if ceiling is None or len(recent) < ceiling:
        return 0.0
    return max(0.0, recent[-ceiling] + WINDOW_S - now)


_TRY_COLUMNS = "kind, target, ok, who, browser, address, tried_at"


class ThrottleStore(StorePart):
    """Counting and recording tries at secrets, in the store so that every process shares the counts."""

    def _failures(self, cur, kind: str, column: str, value: str, since: float) -> list[float]:
        rows = cur.execute(f"SELECT tried_at FROM access_tries WHERE kind = ? AND {column} = ? AND NOT ok "
                           "AND tried_at > ?", [kind, value, since]).fetchall()
        return [row[0] for row in rows]

    def _known(self, cur, kind: str, target: str, browser: str) -> bool:
        """Whether this browser has opened this secret before: then strangers' counts never slow it."""
        return bool(browser) and cur.execute(
            "SELECT 1 FROM access_tries WHERE kind = ? AND target = ? AND browser = ? AND ok LIMIT 1",
            [kind, target, browser]).fetchone() is not None

    def _wait(self, cur, kind: str, target: str, client: Client, now: float) -> tuple[float, str]:
        """(seconds to wait, which count makes it) for one more try: the longest of the counts that apply."""
        since = now - WINDOW_S
        waits = [(0.0, "browser")]
        if client.browser:
            waits.append((backoff_wait(self._failures(cur, kind, "browser", client.browser, since), now,
                                       BROWSER_FREE), "browser"))
        if not self._known(cur, kind, target, client.browser):
            if client.address:
                waits.append((backoff_wait(self._failures(cur, kind, "address", client.address, since), now,
                                           ADDRESS_FREE), "address"))
            waits.append((ceiling_wait(self._failures(cur, kind, "target", target, since), now,
                                       _CEILINGS.get(kind, TARGET_CEILING)), "target"))
        return max(waits)

    def throttle_wait(self, kind: str, target: str, client: Client) -> float:
        """Seconds until `client` may try `target` again (0: now); nothing is recorded."""
        now = self.clock()
        with self._reading() as cur:
            return self._wait(cur, kind, target, client, now)[0]

    def attempt_secret(self, kind: str, target: str, check: Callable[[], bool], *, client: Client,
                       who: str = "") -> bool:
        """Run `check()` (True when the guess is right) unless `client` must wait, and record the try.

        Raises Throttled, recording nothing, while a count that applies to this try says wait. The check, the
        counts and the record share one transaction, holding the target, the browser and the address, so
        parallel guesses from several processes cannot all slip in under a count."""
        now = self.clock()
        with self._transaction() as cur:
            self._hold_throttle(cur, kind, (target, client.browser, client.address))
            wait, counted = self._wait(cur, kind, target, client, now)
            if wait > 0:
                raise Throttled(wait, counted)
            ok = bool(check())
            self._record(cur, kind, target, ok, who, client, now)
        return ok

    def _record(self, cur, kind: str, target: str, ok: bool, who: str, client: Client, now: float) -> None:
        cur.execute(f"INSERT INTO access_tries ({_TRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [kind, target, ok, who[:200], client.browser[:200], client.address[:200], now])

    def _hold_throttle(self, cur, kind: str, keys: tuple[str, str, str]) -> None:
        """Serialise tries that share a target, a browser or an address (a backend with row locks overrides
        this; the DuckDB store's one write lock already serialises every write)."""

    def previous_success(self, kind: str, target: str) -> float | None:
        """When the target's latest right try before the newest one happened (None: this is the first)."""
        rows = self._all("SELECT tried_at FROM access_tries WHERE kind = ? AND target = ? AND ok "
                         "ORDER BY tried_at DESC LIMIT 2", [kind, target])
        return rows[1][0] if len(rows) > 1 else None

    def failed_tries_since(self, since: float | None) -> dict[str, int]:
        """Wrong tries of each kind (instructor passphrase, resume code, join code) after `since` (None: ever)."""
        rows = self._all("SELECT kind, COUNT(*) FROM access_tries WHERE NOT ok AND tried_at > ? GROUP BY kind",
                         [since if since is not None else -1.0])
        return {kind: int(n) for kind, n in rows}

    def record_access(self, kind: str, target: str, ok: bool, who: str = "",
                      client: Client = Client("", "")) -> None:
        """A try that needs no check of ours (a provider's sign-in), kept so the board can count since it."""
        with self._transaction() as cur:
            self._record(cur, kind, target, ok, who, client, self.clock())
