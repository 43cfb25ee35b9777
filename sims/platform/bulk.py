"""The calm stretch drawn in bulk: the run ``calm.CalmStretch``'s loop gives, computed mostly by NumPy.

Python's ``random.Random`` and NumPy's legacy ``RandomState`` are the same Mersenne Twister and turn it
into doubles the same way, so a RandomState set to the run's state draws in one call the numbers the
loop would draw one by one. The loop reads them in a fixed pattern: an arrival of everyone else takes
one number for its tenant, four normal deviates and one for the next gap; an Acme arrival the same
without the tenant (and one more during the surge, for its repeat). A deviate (Kinderman-Monahan) takes
pairs of numbers until one pair is accepted. Which pairs are accepted, and where four accepted pairs
from any position end, are tables over the whole stream; a short loop walks the arrivals through them
(``_walk``), and the deviates, tenants, queue and monitor samples are array operations.

Exactness: +, -, *, / and comparisons are the same IEEE operations in NumPy as in Python, and cumulative
sums add in order. Every logarithm or exponential a result keeps is math's, as in the loop; NumPy's
logarithm only decides which pairs are accepted, and any decision near a tie is made again with math.
The stretch is drawn in bulk only where it is likely to stay calm to its end (``worth_trying``); when a
call would fail after all, the loop runs the stretch instead (``plan`` returns None). The tests compare
every field of the result with the loop's and with a process per job.
"""
from __future__ import annotations

import heapq
import math
import threading
from itertools import repeat
from random import NV_MAGICCONST

import numpy as np

from sims.platform.params import ACME, STEPS
from sims.platform.records import FINISHED, QUEUED, RUNNING, Job, JobRecord, Sample

SURE_OF_CALM = 0.5              # expected calls that time out in the stretch, above which the loop runs it

KM_ACCEPTED = math.sqrt(math.pi * math.e) / 4     # share of Kinderman-Monahan pairs accepted (0.73)
WINDOW = 2048                   # jobs checked at once for a free slot on arrival
CALM_AGAIN = 32                 # jobs in a row that start on arrival before the queue is checked in bulk again


def worth_trying(pf, stop: float) -> bool:
    """Whether a stretch up to ``stop`` is likely to stay calm to its end: A stays up well past it and calls
    long enough to fail are rare. (Either way the run is the same; a stretch that fails is drawn twice.)"""
    p, safe_call = pf.p, pf.calm_safe_call_s
    if pf.outage is not None and pf.outage[0] < stop + len(STEPS) * safe_call:
        return False
    if p.call_sigma == 0:
        too_long = float(math.exp(pf.mu) > safe_call)
    else:
        too_long = 0.5 * math.erfc((math.log(safe_call) - pf.mu) / (p.call_sigma * math.sqrt(2.0)))
    arrivals = stop * (pf.others_rate + p.acme_normal_jobs_per_s * max(1.0, p.acme_multiplier))
    return too_long * len(STEPS) * arrivals < SURE_OF_CALM


_THREAD = threading.local()


def twister_at(state: tuple) -> np.random.RandomState:
    """NumPy's legacy Mersenne Twister set to a ``random.Random`` state (one per thread: a new one costs 0.4 ms)."""
    twister = getattr(_THREAD, "twister", None)
    if twister is None:
        twister = _THREAD.twister = np.random.RandomState(0)
    twister.set_state(("MT19937", np.array(state[1][:-1], dtype=np.uint32), state[1][-1]))
    return twister


class OutOfDraws(Exception):
    """The walk needed more numbers than were drawn (the stream is drawn again, twice as long)."""


class Stream:
    """``size`` uniforms from a Mersenne Twister state on, and where the loop's deviates fall in them."""

    def __init__(self, state: tuple, size: int) -> None:
        u = twister_at(state).random_sample(size)
        # a pair at i is (u[i], 1 - u[i + 1]); operations in place, so few large arrays are made
        z = np.subtract(u[:-1], 0.5)
        z *= NV_MAGICCONST
        work = np.subtract(1.0, u[1:])
        z /= work
        bound = np.log(work)
        np.negative(bound, out=bound)
        zz = np.multiply(z, z, out=work)
        zz /= 4.0
        accepted = zz <= bound
        zz -= bound                                         # how far from a tie, against a margin far
        np.abs(zz, out=zz)                                  # wider than NumPy's logarithm can be off
        bound *= 1e-9
        bound += 1e-12
        for i in np.flatnonzero(zz <= bound).tolist():      # near a tie: decided again as the loop decides
            z_i, u2 = float(z[i]), 1.0 - float(u[i + 1])
            accepted[i] = z_i * z_i / 4.0 <= -math.log(u2)
        past = size + 1                                     # "beyond the numbers drawn"
        first = np.full(past + 3, past, dtype=np.int32)     # the first accepted pair at i, i + 2, i + 4, ...
        for parity in (0, 1):
            chosen = np.flatnonzero(accepted[parity::2])    # in pairs of this parity
            if len(chosen):
                runs = np.diff(chosen, prepend=-1)
                first[parity:2 * chosen[-1] + parity + 1:2] = np.repeat(chosen * 2 + parity, runs)
        after = first + 2                                   # the position after one deviate drawn from i
        twice = after[after]
        self.u, self.z, self.first = u, z, first
        self.after4 = twice[twice]                          # the position after four deviates drawn from i


class BulkStretch:
    """A calm stretch drawn in bulk: its jobs as arrays, to hand to the clock as Jobs or settle at the end."""

    def __init__(self, pf, stop: float) -> None:
        self.pf = pf
        self.stop = stop
        self.state = pf.rng.getstate()
        expected = stop * (pf.others_rate + pf.p.acme_normal_jobs_per_s * max(1.0, pf.p.acme_multiplier))
        size = int(expected * (2 + 8 / KM_ACCEPTED) * 1.1) + 1024    # tenant, gap, four deviates; some spare
        while True:
            try:
                self.stream = Stream(self.state, size)
                self._walk()
                break
            except OutOfDraws:
                size *= 2
        self._deviates()

    def _walk(self) -> None:
        """The arrivals up to ``stop`` in the loop's order: when, whose tenant number, where their deviates start."""
        pf, p = self.pf, self.pf.p
        # memoryviews: indexed one at a time from Python, they give Python's own ints and floats
        after4, u, log = memoryview(self.stream.after4), memoryview(self.stream.u), math.log
        stop, total, break_s = self.stop, pf.others_rate, pf.break_s
        normal, surge = p.acme_normal_jobs_per_s, p.acme_normal_jobs_per_s * p.acme_multiplier
        t_others = pf.next_others
        t_acme, acme_surging = pf.next_acme
        times, where = [], []               # where: the tenant number of everyone else, ~ the first deviate of Acme
        q = 0                                               # the next number the loop would draw
        try:
            while True:
                if t_others < t_acme:
                    t = t_others
                    if not t < stop:
                        break
                    e = after4[q + 1]
                    times.append(t)
                    where.append(q)
                    t_others = t + (-log(1.0 - u[e]) / total)
                    q = e + 1
                    continue
                t = t_acme
                if not t < stop:
                    break
                if acme_surging is None:                    # the rate changes: draw again from here
                    e = q
                else:
                    start = q + 1 if acme_surging else q    # during the surge: its repeat, then its deviates
                    e = after4[start]
                    times.append(t)
                    where.append(~start)
                # _acme_draw(t), with the number at e
                acme_surging = t >= break_s
                gap = -log(1.0 - u[e]) / (surge if acme_surging else normal)
                if not acme_surging and t + gap > break_s:
                    t_acme, acme_surging = t + (break_s - t), None
                else:
                    t_acme = t + gap
                q = e + 1
        except IndexError:
            raise OutOfDraws from None
        self.drawn = q
        self.next_others, self.next_acme = t_others, (t_acme, acme_surging)
        self.arrived = np.array(times, dtype=float)
        where = np.array(where, dtype=np.int64)
        self.others = where >= 0
        self.draws = np.where(self.others, where + 1, ~where)
        self.tenant_at = where[self.others]

    def _deviates(self) -> None:
        """Each job's four call durations and its tenant, from the positions the walk found."""
        pf, stream = self.pf, self.stream
        first, at = stream.first, self.draws
        where = []
        for _ in range(4):
            at = first[at]
            where.append(at)
            at = at + 2
        x = pf.mu + stream.z[np.stack(where)] * pf.p.call_sigma
        self.calls = np.fromiter(map(math.exp, memoryview(x.ravel())), float, count=x.size).reshape(x.shape)
        tenants = np.full(len(self.draws), ACME, dtype=np.int64)
        cumulative = np.array(pf.others_cumulative)
        tenants[self.others] = 1 + np.searchsorted(cumulative, stream.u[self.tenant_at] * pf.others_rate, side="left")
        self.tenants = tenants

    def queue(self) -> bool:
        """Start and call ends of every job as the loop's first-in first-out slots give; False if a call fails.

        While fewer than ``slots`` earlier jobs run past an arrival, the job starts when it arrives: that
        is checked for a window of jobs at once against the slots' free times (a job ends after it
        arrives, so counting the earlier ends past an arrival is one sorted search). A job that waits,
        or one that could meet the outage or a timeout, is done one at a time, as the loop does it.
        """
        pf = self.pf
        calls, arrived = self.calls, self.arrived
        n = len(arrived)
        ends = np.empty_like(calls)
        np.add(arrived, calls[0], out=ends[0])
        for k in (1, 2, 3):
            np.add(ends[k - 1], calls[k], out=ends[k])
        if n and not (ends[3] > arrived).all():
            return False                        # a job that ends as it arrives: leave it to the loop
        starts = arrived.copy()
        safe_until, safe_call = pf.calm_safe_until, pf.calm_safe_call_s
        risky = (ends[3] > safe_until) | (calls.max(axis=0) > safe_call)
        slots = pf.p.slots
        free = np.zeros(slots)                  # when each slot is next free (the slots' heap, unordered)
        k = 0
        while k < n:
            end = min(k + WINDOW, n)
            t = arrived[k:end]
            later = np.sort(ends[3, k:end])
            free.sort()
            busy = (slots - np.searchsorted(free, t, side="right")
                    + np.arange(end - k) - np.searchsorted(later, t, side="right"))
            stuck = (busy >= slots) | risky[k:end]
            b = k + int(np.argmax(stuck)) if stuck.any() else end
            if b > k:
                free = np.partition(np.concatenate((free, ends[3, k:b])), -slots)[-slots:]
            if b == end:
                k = end
                continue
            k, free = self._one_by_one(b, free, starts, ends)
            if k < 0:
                return False
        self.starts, self.ends = starts, ends
        return True

    def _one_by_one(self, k: int, free: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[int, np.ndarray]:
        """The loop's own steps from job ``k`` until jobs start on arrival again; (-1, _) when a call fails."""
        pf = self.pf
        heap = free.tolist()
        heapq.heapify(heap)
        arrived, calls = self.arrived, self.calls
        safe_until, safe_call = pf.calm_safe_until, pf.calm_safe_call_s
        n, calm = len(arrived), 0
        while k < n and calm < CALM_AGAIN:
            t = float(arrived[k])
            c = calls[:, k].tolist()
            first = heap[0]
            start = t if first <= t else first
            calm = calm + 1 if first <= t else 0
            e0 = start + c[0]
            e1 = e0 + c[1]
            e2 = e1 + c[2]
            e3 = e2 + c[3]
            if not (e3 <= safe_until and max(c) <= safe_call) and len(pf._plan_calm_calls(c, start)) < len(c):
                return -1, free
            heapq.heapreplace(heap, e3)
            starts[k] = start
            ends[:, k] = (e0, e1, e2, e3)
            k += 1
        return k, np.array(heap)

    def hand_over(self) -> None:
        """The stretch's jobs and random state as the loop leaves them, for the clock to take over."""
        pf = self.pf
        for tenant, arrived, calls, ends in zip(self.tenants.tolist(), self.arrived.tolist(), self.calls.T.tolist(),
                                                self.ends.T.tolist()):
            job = Job(tenant, arrived, tuple(calls))
            job.call_ends = ends
            pf.jobs.append(job)
        pf.stretch_starts.extend(self.starts.tolist())
        twister = twister_at(self.state)
        twister.random_sample(self.drawn)
        key, pos = twister.get_state()[1:3]
        pf.rng.setstate((self.state[0], (*key.tolist(), int(pos)), self.state[2]))

    def settle(self, until: float) -> tuple[list[Sample], tuple[JobRecord, ...], int]:
        """A run that was one calm stretch, settled at its end: what ``settle_stretch``, ``stretch_samples``,
        ``settle_calm`` and ``handed_over`` make of the loop's Jobs, from the arrays. Returns the samples,
        the job records and the events."""
        pf = self.pf
        a = pf.providers[0]
        starts, ends, arrived, tenants = self.starts, self.ends, self.arrived, self.tenants
        started = starts < until
        finished = started & (ends[3] < until)
        answered = ends[:3] < until                 # calls answered inside a job (finished, or running at the end)
        handovers = np.sort(ends[:3][answered])
        n_started, n_finished, n_handovers = int(started.sum()), int(finished.sum()), len(handovers)
        a.inflight += n_started - n_finished
        a.sent += n_started + n_handovers
        a.succeeded += n_finished + n_handovers
        # price by price, as each answer adds it (a cumulative sum adds in order)
        a.spend = float(np.add.accumulate(np.r_[a.spend, np.full(n_finished + n_handovers, a.price)])[-1])
        samples = self._samples(until, started, finished, handovers)
        started_at = np.where(started, starts, None).tolist()
        ended_at = np.where(finished, ends[3], None).tolist()
        state = np.where(finished, FINISHED, np.where(started, RUNNING, QUEUED)).tolist()
        steps = np.where(finished, len(STEPS), answered.sum(axis=0)).tolist()
        plans = np.array(pf.plans)[tenants].tolist()
        n = len(arrived)
        records = tuple(map(tuple.__new__, repeat(JobRecord, n), zip(
            tenants.tolist(), plans, arrived.tolist(), started_at, ended_at, state, steps, repeat(False, n),
            repeat(0, n))))
        return samples, records, n + n_finished

    def _samples(self, until: float, started: np.ndarray, finished: np.ndarray, handovers: np.ndarray) -> list[Sample]:
        """The monitor's samples every ``sample_s`` from 0 and at ``until``, with the handovers counted."""
        ticks = []
        tick = 0                                    # SimPy's clock starts at the whole number 0
        while tick < until:
            ticks.append(tick)
            tick = tick + self.pf.p.sample_s
        ticks.append(until)
        at = np.array(ticks, dtype=float)
        acme = self.tenants == ACME
        counts = {}
        for name, group in (("acme", acme), ("others", ~acme)):
            counts[name] = [np.searchsorted(times, at, side="right") for times in (
                self.arrived[group], self.starts[group & started], np.sort(self.ends[3][group & finished]))]
        handed = np.searchsorted(handovers, at, side="left")
        (acme_in, acme_on, acme_off), (others_in, others_on, others_off) = counts["acme"], counts["others"]
        columns = (acme_in - acme_on, others_in - others_on, acme_on - acme_off, others_on - others_off,
                   acme_on + others_on + handed, acme_off + others_off + handed)
        return [Sample(t, queued_acme, queued_others, running_acme, running_others,
                       (running_acme + running_others, 0, 0), (sent, 0, 0), (succeeded, 0, 0), (True, True, True))
                for t, queued_acme, queued_others, running_acme, running_others, sent, succeeded
                in zip(ticks, *(column.tolist() for column in columns))]
