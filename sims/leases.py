"""Leases and split brain: a leader that keeps writing after its lease has passed to a standby.

A lock service grants one lease at a time; the holder writes to shared storage while its own clock says the
lease is still good. A pause or a stepped clock lets two writers overlap; fencing tokens make storage refuse
the old one.

Assumptions (units are seconds and writes; real time is the lock service's clock):

* At t = 0 node A holds the lease (token 1). It renews every ``renew_every_s``; a renewal that reaches the
  lock service while A still holds the lease extends it to that moment + ``lease_s``. A counts its lease from
  when it sent the renewal, on its own clock, and stops writing ``margin_s`` before its own clock says the
  lease ends.
* The leader writes every ``write_every_s``: it checks its lease, then the write lands at storage
  ``write_s`` later. Storage keeps every write; with ``fencing`` it refuses a write whose token is lower than
  the highest it has accepted.
* ``fault = "pause"``: at ``fault_at_s`` A's process stops for ``fault_s`` (a long GC or VM pause); nothing
  of A's runs meanwhile. It strikes just after A checked its lease and sent a write, which lands after
  the pause. ``fault = "partition"``: from
  ``fault_at_s`` for ``fault_s`` A cannot reach the lock service (renewals fail) but still reaches storage,
  and A's clock reads ``clock_step_s`` behind real time from the fault on (a bad time sync).
* Node B polls the lock service every ``poll_s`` from a seeded phase in U(0, ``poll_s``); once the lease
  has lapsed it takes it (token 2) and writes on the same schedule. B never fails.
* A stops for good once it knows it lost the lease: its own clock says the lease is over, or a renewal is
  refused.

Default params: a 10 s lease renewed every 3 s and a 14 s pause that starts 1.5 s after the renewal at 6 s,
so the lease lapses 10 - 1.5 = 8.5 s into the pause and A wakes 14 - 8.5 = 5.5 s after that, with B already
writing. The split-brain drill's runs come from its presets (sims/presets.py), built from each draw.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import simpy

from sims._budget import run_within
from sims._params import check_bounds, choice, flag

FAULTS = ("pause", "partition")
MAX_WRITES = 100_000                # writes per run: the event budget
EVENTS_PER_WRITE = 6
BOUNDS = {
    "lease_s": (0.1, 600.0),
    "renew_every_s": (0.05, 600.0),
    "margin_s": (0.0, 600.0),
    "write_every_s": (0.01, 60.0),
    "write_s": (0.0, 60.0),
    "fault_at_s": (0.0, 3_600.0),
    "fault_s": (0.0, 3_600.0),
    "clock_step_s": (0.0, 600.0),
    "poll_s": (0.01, 600.0),
    "duration_s": (0.1, 3_600.0),
}


@dataclass(frozen=True)
class Params:
    """The lease, the two nodes' schedules and the fault that hits the leader."""

    lease_s: float = 10.0               # how long a granted or renewed lease lasts
    renew_every_s: float = 3.0          # the holder renews this often
    margin_s: float = 0.0               # the holder stops this long before its own clock says the lease ends
    write_every_s: float = 0.5          # the leader writes this often
    write_s: float = 0.05               # from the lease check to the write landing at storage
    fault: str = "pause"                # "pause" or "partition"
    fault_at_s: float = 7.5             # 1.5 s after the renewal at 6 s
    fault_s: float = 14.0               # how long the pause or the partition lasts
    clock_step_s: float = 0.0           # in "partition", A's clock reads this far behind from the fault on
    poll_s: float = 1.0                 # B asks for the lease this often
    fencing: bool = False               # storage refuses writes with an older token
    duration_s: float = 40.0            # simulated seconds

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        choice("fault", self.fault, FAULTS)
        flag("fencing", self.fencing)
        if self.renew_every_s >= self.lease_s:
            raise ValueError(f"renew_every_s must be below lease_s ({self.lease_s:g}), got {self.renew_every_s:g}")
        writes = 2 * self.duration_s / self.write_every_s + self.duration_s / self.poll_s
        if writes > MAX_WRITES:
            raise ValueError(f"this run would make about {writes:,.0f} writes and polls; the limit is {MAX_WRITES:,}")


@dataclass(frozen=True)
class Result:
    """Every write that reached storage and when each node held or believed it held the lease."""

    params: Params
    seed: int
    # one row per write at storage: (landed s, node "A" | "B", token, accepted)
    writes: tuple[tuple[float, str, int, bool], ...]
    b_acquired_s: float | None          # when B took the lease
    a_stopped_s: float | None           # when A stopped believing it was the leader (None: never)
    lease_lapsed_s: float | None        # when A's lease ended at the lock service


def run(params: Params, seed: int = 1) -> Result:
    rng = random.Random(seed)
    env = simpy.Environment()
    p = params
    lock = {"holder": "A", "token": 1, "expires": p.lease_s}
    highest = [0]
    writes: list[tuple[float, str, int, bool]] = []
    seen = {"b_acquired": None, "a_stopped": None, "lapsed": None}
    fault_end = p.fault_at_s + p.fault_s

    def holder_now() -> str | None:
        if env.now >= lock["expires"]:
            if lock["holder"] == "A" and seen["lapsed"] is None:
                seen["lapsed"] = lock["expires"]
            return None
        return lock["holder"]

    def a_clock() -> float:
        stepped = p.fault == "partition" and env.now >= p.fault_at_s
        return env.now - (p.clock_step_s if stepped else 0.0)

    def paused_until() -> float | None:
        if p.fault == "pause" and p.fault_at_s < env.now < fault_end:
            return fault_end
        return None

    def land(node: str, token: int, checked_at: float):
        landing = checked_at + p.write_s
        if node == "A" and p.fault == "pause" and checked_at <= p.fault_at_s < landing:
            landing += p.fault_s            # the process froze between its check and its write
        yield env.timeout(landing - env.now)
        accepted = not p.fencing or token >= highest[0]
        if accepted:
            highest[0] = max(highest[0], token)
        writes.append((env.now, node, token, accepted))

    def node_a():
        believed_until = p.lease_s          # on A's own clock
        next_renew = p.renew_every_s
        next_write = 0.0
        caught_writing = p.fault == "pause"   # the pause strikes just after A checked and sent a write
        while True:
            wake = min(next_renew, next_write, p.fault_at_s if caught_writing else next_write)
            yield env.timeout(max(0.0, wake - env.now))
            frozen = paused_until()
            if frozen is not None:
                yield env.timeout(frozen - env.now)
                continue
            if a_clock() >= believed_until - p.margin_s:
                break
            if caught_writing and env.now >= p.fault_at_s:
                caught_writing = False
                if next_write <= env.now:           # this is the write due now, not one more
                    next_write += p.write_every_s
                env.process(land("A", 1, env.now))
                continue
            if env.now >= next_renew:
                next_renew += p.renew_every_s
                sent_on_my_clock = a_clock()
                unreachable = p.fault == "partition" and p.fault_at_s <= env.now < fault_end
                if unreachable:
                    continue
                if holder_now() != "A":
                    break                   # refused: someone else holds it, or it lapsed
                lock["expires"] = env.now + p.lease_s
                believed_until = sent_on_my_clock + p.lease_s
                continue
            next_write += p.write_every_s
            env.process(land("A", 1, env.now))
        seen["a_stopped"] = env.now

    def node_b():
        yield env.timeout(rng.uniform(0.0, p.poll_s))
        while holder_now() is not None:
            yield env.timeout(p.poll_s)
        lock.update(holder="B", token=2, expires=env.now + p.lease_s)
        seen["b_acquired"] = env.now
        next_renew = env.now + p.renew_every_s
        while True:
            if env.now >= next_renew:
                lock["expires"] = env.now + p.lease_s
                next_renew += p.renew_every_s
            env.process(land("B", 2, env.now))
            yield env.timeout(p.write_every_s)

    env.process(node_a())
    env.process(node_b())
    budget = EVENTS_PER_WRITE * int(2 * p.duration_s / p.write_every_s + p.duration_s / p.poll_s + 100)
    run_within(env, budget, "the lease run", until=p.duration_s)
    return Result(params=p, seed=seed, writes=tuple(sorted(writes)), b_acquired_s=seen["b_acquired"],
                  a_stopped_s=seen["a_stopped"], lease_lapsed_s=seen["lapsed"])


# ---- statistics: pure functions of the result ------------------------------------------------

def stale_writes(result: Result) -> list[tuple[float, str, int, bool]]:
    """A's writes that reached storage after B's first write: the split brain, accepted or refused. (One that
    lands between B's takeover and B's first write conflicts with nothing yet, and fencing lets it in.)"""
    first_b = min((w[0] for w in result.writes if w[1] == "B"), default=None)
    if first_b is None:
        return []
    return [w for w in result.writes if w[1] == "A" and w[0] >= first_b]


def stale_accepted(result: Result) -> int:
    return sum(1 for w in stale_writes(result) if w[3])


def overlap_s(result: Result) -> float:
    """How long both nodes believed they led: from B's takeover to A's stop (or its last landed write)."""
    if result.b_acquired_s is None:
        return 0.0
    a_last = max((w[0] for w in result.writes if w[1] == "A"), default=0.0)
    a_end = max(a_last, result.a_stopped_s if result.a_stopped_s is not None else result.params.duration_s)
    return max(0.0, a_end - result.b_acquired_s)


def wake_after_takeover_s(result: Result) -> float | None:
    """In a pause: how long B had led when A woke (negative when A woke first)."""
    p = result.params
    if p.fault != "pause" or result.b_acquired_s is None:
        return None
    return p.fault_at_s + p.fault_s - result.b_acquired_s


def summary(result: Result) -> dict:
    wake = wake_after_takeover_s(result)
    return {
        "fault": result.params.fault,
        "fencing": result.params.fencing,
        "writes": len(result.writes),
        "lease_lapsed_s": result.lease_lapsed_s,
        "b_acquired_s": None if result.b_acquired_s is None else round(result.b_acquired_s, 6),
        "a_stopped_s": None if result.a_stopped_s is None else round(result.a_stopped_s, 6),
        "stale_writes": len(stale_writes(result)),
        "stale_accepted": stale_accepted(result),
        "stale_refused": len(stale_writes(result)) - stale_accepted(result),
        "overlap_s": round(overlap_s(result), 6),
        "wake_after_takeover_s": None if wake is None else round(wake, 6),
    }
