"""The calm shortcut: an optimisation of the platform model that gives exactly the run it would give.

While no call has failed, a job's calls are known when it starts. The first-in-first-out stretch before
the mitigations then runs as one loop over the arrivals (no SimPy events), and later calm jobs are one
event each instead of a process with one event per call. From the first call that will not succeed
every job is a SimPy process again (sims.platform.model). Switch it off with CALM_SHORTCUT = False: the
equivalence test (tests/test_sim_platform.py, "the calm shortcut") runs both ways and compares results.
"""
from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable
from random import NV_MAGICCONST

import numpy as np
import simpy

from sims._budget import PROGRESS_EVERY_EVENTS
from sims.platform import bulk
from sims.platform.params import ACME, STEPS
from sims.platform.records import FINISHED, OK, RUNNING, At, Job, Sample

# Plan a job's calls in one event while nothing has failed (see _start_calm). False runs every job
# as its own process, one event per call; the tests check that both give the same result.
CALM_SHORTCUT = True
# Draw the stretch in bulk (sims.platform.bulk) where it is likely calm to its end; False always runs the loop.
BULK = True


class CalmStretch:
    """The calm shortcut's half of the platform model (mixed into sims.platform.model.Platform)."""

    # --- the calm first-in-first-out stretch --------------------------------------------------------
    # Before the mitigations start the claim rule is first-in, first-out with no caps, no bucket and
    # no keys, and while calm every call is known at its job's start. The fleet is then a plain
    # queue with ``slots`` servers: a job starts when it arrives or when the earliest slot frees,
    # whichever is later, and ends when its calls add up. ``run_stretch`` runs that queue as one
    # loop over the arrivals (the same draws in the same order), with no SimPy events at all, up to
    # the mitigations, the first call that will not succeed, or the end of the run. ``resume`` then
    # sets up the state the event-by-event run would have reached there, and the clock takes over.
    def run_stretch(self, until: float, progress: Callable[[float], None] | None) -> float:
        """Run the stretch; returns the time it stopped at (0 when it cannot start)."""
        self.first_arrivals()
        p = self.p
        # a final design that keeps first-in first-out with no caps, bucket or keys changes none of it
        same_queue = p.claim == "fifo" and not (p.pause_acme or p.rate_limit or p.idempotency)
        stop = (until if same_queue else min(until, self.mit_from)) if self.calm else 0
        if stop <= 0:
            return 0
        if BULK and bulk.worth_trying(self, stop):
            drawn = bulk.BulkStretch(self, stop)
            if drawn.queue():
                self.submissions += len(drawn.arrived)
                self.next_others, self.next_acme = drawn.next_others, drawn.next_acme
                if stop < until:
                    drawn.hand_over()
                else:
                    self.bulk = drawn               # the whole run: model.run settles it in bulk too
                return stop
        rng = self.rng
        rnd, log, exp, mu, sigma = rng.random, math.log, math.exp, self.mu, p.call_sigma
        safe_until, safe_call = self.calm_safe_until, self.calm_safe_call_s
        cumulative, total = self.others_cumulative, self.others_rate
        free_at = [0.0] * p.slots                  # a heap: when each slot is next free
        jobs, starts = self.jobs, self.stretch_starts
        add_job, add_start, left, replace = jobs.append, starts.append, bisect.bisect_left, heapq.heapreplace
        submitted = 0
        t_others = self.next_others
        t_acme, acme_surging = self.next_acme
        calm_end = math.inf                        # the start of the first call that will not succeed
        next_report = PROGRESS_EVERY_EVENTS
        while True:
            if t_others < t_acme:
                t = t_others
                if not (t < stop and t < calm_end):
                    break
                tenant = 1 + left(cumulative, rnd() * total)
            else:
                t = t_acme
                if not (t < stop and t < calm_end):
                    break
                if acme_surging is None:           # the rate changes: draw again from here
                    t_acme, acme_surging = self._acme_draw(t)
                    continue
                if acme_surging:
                    rng.random()                   # repeat or not (a new job either way without keys)
                tenant = ACME
            submitted += 1
            # four lognormvariate(mu, sigma) draws, its normalvariate (Kinderman-Monahan) written out:
            # the same draws in the same order, for half the time of the calls
            drawn = []
            while len(drawn) < 4:
                u1 = rnd()
                u2 = 1.0 - rnd()
                z = NV_MAGICCONST * (u1 - 0.5) / u2
                if z * z / 4.0 <= -log(u2):
                    drawn.append(exp(mu + z * sigma))
            calls = tuple(drawn)
            job = Job(tenant, t, calls)
            add_job(job)
            free = free_at[0]
            start = t if free <= t else free
            add_start(start)
            c0, c1, c2, c3 = calls
            e0 = start + c0                        # the sums the job's process would make
            e1 = e0 + c1
            e2 = e1 + c2
            e3 = e2 + c3
            if e3 <= safe_until and max(calls) <= safe_call:
                job.call_ends = [e0, e1, e2, e3]
                replace(free_at, e3)
            elif start < calm_end:
                ends = self._plan_calm_calls(calls, start)
                job.call_ends = ends
                if len(ends) < len(calls):         # a call fails: the calm ends when it starts
                    calm_end = min(calm_end, ends[-1] if ends else start)
                    heapq.heapreplace(free_at, math.inf)    # busy past the end of the stretch
                else:
                    heapq.heapreplace(free_at, ends[-1])
            else:                                  # starts after the calm: still queued then
                heapq.heapreplace(free_at, math.inf)
            if tenant == ACME:
                t_acme, acme_surging = self._acme_draw(t)
            else:
                t_others = t + (-log(1.0 - rnd()) / total)     # expovariate(total), inlined
            if progress is not None and len(jobs) >= next_report:
                next_report += PROGRESS_EVERY_EVENTS
                progress(min(1.0, t / until))
        self.submissions += submitted
        self.next_others, self.next_acme = t_others, (t_acme, acme_surging)
        self.calm_until = calm_end
        return min(stop, calm_end)

    def _plan_calm_calls(self, calls: tuple[float, ...], start: float) -> list[float]:
        """When each call on A ends, up to (not including) the first that will not succeed."""
        a = self.providers[0]
        ends: list[float] = []
        t = start
        for healthy in calls:
            outcome, held = self._plan_call(a, healthy, t)
            if outcome != OK:
                break
            t = t + held
            ends.append(t)
        return ends

    def settle_stretch(self, at: float, resuming: bool) -> None:
        """Each stretch job as the event-by-event run leaves it at ``at``: queued, running or finished.

        A job counts as started (or finished) at ``at`` itself only when the calm ends there: that
        start, or the end that freed its slot, is what ended it. Only a run that goes on (``resuming``)
        needs the queues, the claim numbers and the heap.
        """
        ended_calm = at == self.calm_until
        steps, handovers, running = len(STEPS), self.handovers, self.running
        queued: list[Job] = []
        started: list[Job] = []
        finished = 0
        for job, start in zip(self.jobs, self.stretch_starts):
            if not (start < at or (start == at and ended_calm)):
                job.call_ends = None
                queued.append(job)
                continue
            started.append(job)
            job.started = start
            ends = job.call_ends
            if len(ends) == steps and (ends[-1] < at or (ends[-1] == at and ended_calm)):
                job.state, job.ended, job.steps_done, job.call_ends = FINISHED, ends[-1], steps, None
                handovers += ends[:-1]
                finished += 1
                continue
            job.state = RUNNING
            running[job.tenant] += 1
            if not ends:                            # its first call fails: it goes on as a process
                job.call_ends = None
                self.failing_first.append(job)
        a = self.providers[0]
        busy = len(started) - finished
        self.free_slots -= busy
        self.running_acme = running[ACME]
        a.inflight += busy - len(self.failing_first)
        a.sent += len(started) - len(self.failing_first)
        a.succeeded += finished
        spend, price = a.spend, a.price
        for _ in range(finished):
            spend += price              # price by price, as the jobs' own ends would add it
        a.spend = spend
        if not resuming:
            return
        for job in queued:
            self.tenant_queue[job.tenant].append(job)
            self.queued_count[job.tenant] += 1
        self.queued_acme = self.queued_count[ACME]
        self.queued_others = len(queued) - self.queued_acme
        # Enqueues and starts each took the next number in the order they happened (an arrival
        # before a start at the same moment: a job that finds a free slot is queued, then claimed).
        arrivals, number, i, j = self.jobs, 1, 0, 0
        while i < len(arrivals) or j < len(started):
            if j == len(started) or (i < len(arrivals) and arrivals[i].arrived <= started[j].started):
                arrivals[i].seq = number
                i += 1
            else:
                self.last_served[started[j].tenant] = number
                j += 1
            number += 1
        self.next_seq = number
        for tenant in range(len(self.plans)):
            self._offer(tenant)

    def stretch_samples(self, until: float, until_sample: bool) -> float:
        """The monitor's samples while the stretch ran; returns the first tick after it."""
        acme_in, others_in, acme_on, others_on, acme_off, others_off = [], [], [], [], [], []
        for job, start in zip(self.jobs, self.stretch_starts):
            acme = job.tenant == ACME
            (acme_in if acme else others_in).append(job.arrived)
            if job.started is not None:
                (acme_on if acme else others_on).append(start)
                if job.ended is not None:
                    (acme_off if acme else others_off).append(job.ended)
        acme_off.sort()
        others_off.sort()
        right = bisect.bisect_right

        def at(t: float) -> Sample:
            running_acme = right(acme_on, t) - right(acme_off, t)
            running_others = right(others_on, t) - right(others_off, t)
            started, ended = right(acme_on, t) + right(others_on, t), right(acme_off, t) + right(others_off, t)
            return Sample(t, right(acme_in, t) - right(acme_on, t), right(others_in, t) - right(others_on, t),
                          running_acme, running_others, (running_acme + running_others, 0, 0),
                          (started, 0, 0), (ended, 0, 0), (True, True, True))

        tick = 0                                    # SimPy's clock starts at the whole number 0
        while tick < until:
            self.samples.append(at(tick))
            tick = tick + self.p.sample_s
        if until_sample:
            self.samples.append(at(until))
        return tick

    def resume(self, env: simpy.Environment, first_tick: float) -> None:
        """Hand the run to SimPy's clock at ``env.now``, where the stretch stopped."""
        self.env, p = env, self.p
        now = env.now
        # the switch's timeout was set at time 0, before any tick's: it fires first at the same moment
        if now == self.mit_from:
            self.switch_on()
        elif now < self.mit_from:
            At(env, self.mit_from, None, self.switch_on)
        else:
            self.rule = p.claim         # switched during the stretch, to the same queue (see run_stretch)
        if self.calm and now == self.calm_until:
            self._end_calm()
        elif self.calm:
            for job in self.jobs:
                ends = job.call_ends
                if ends is not None and len(ends) == len(STEPS) - job.steps_done:
                    At(env, ends[-1], job, self._calm_job_done)
            if self.calm_until < math.inf:
                At(env, self.calm_until, None, self._calm_ends_now)
        for job in self.failing_first:
            env.process(self.work(job))
        self._schedule_arrivals()
        env.process(self.monitor(first_tick))

    # --- calm stretch ---------------------------------------------------------------------------
    # While calm, a job's calls cannot interact with anything: A's breaker stays closed (nothing
    # has failed), A has room for every slot and nobody waits for a pool. So each call goes to A
    # and ``_plan_call`` at its start time gives its outcome. A job whose calls all succeed becomes
    # one event at its end instead of a process with one event per call. The moments in between
    # ("handovers": a call to A answers and the next one is sent) change only A's sent and
    # succeeded counts, which only samples and the result read, so the run notes their times and
    # adds them in afterwards (``handed_over``). The first call that will not succeed ends the
    # calm: every calm job becomes an ordinary process again from the end of the call it is in,
    # and the run goes on event by event. The result is the same as with a process per job.
    def _start_calm(self, job: Job) -> bool:
        """Plan a job just started while calm; False when its very first call would fail."""
        now = self.env.now
        calls = job.call_s
        c0, c1, c2, c3 = calls
        e0 = now + c0                   # the sums the process would make, call by call
        e1 = e0 + c1
        e2 = e1 + c2
        e3 = e2 + c3
        if job.steps_done or e3 > self.calm_safe_until or max(calls) > self.calm_safe_call_s:
            return self._start_calm_checked(job, now, calls[job.steps_done:])
        a = self.providers[0]
        a.inflight += 1                 # its first call is sent now
        a.sent += 1
        job.call_ends = [e0, e1, e2, e3]
        At(self.env, e3, job, self._calm_job_done)
        return True

    def _start_calm_checked(self, job: Job, now: float, calls: tuple[float, ...]) -> bool:
        """``_start_calm`` call by call, for a job near the outage or with a call that may time out."""
        ends = self._plan_calm_calls(calls, now)
        if not ends:
            self._end_calm()
            return False
        a = self.providers[0]
        a.inflight += 1
        a.sent += 1
        job.call_ends = ends
        t = ends[-1]
        if len(ends) < len(calls):
            # the call after the last planned one fails: the calm ends when it starts
            if t < self.calm_until:
                self.calm_until = t
                At(self.env, t, None, self._calm_ends_now)
        else:
            At(self.env, t, job, self._calm_job_done)
        return True

    def _calm_job_done(self, event: simpy.Event) -> None:
        job = event._value
        ends = job.call_ends
        if ends is None:
            return                      # the calm ended first; its process finishes the job
        a = self.providers[0]
        job.steps_done += len(ends)
        job.call_ends = None
        self.handovers.extend(ends[:-1])
        a.inflight -= 1
        a.succeeded += 1
        a.spend += a.price
        job.state, job.ended = FINISHED, self.env.now
        self._release_slot(job)
        self.fill()

    def _calm_ends_now(self, event: simpy.Event) -> None:
        if self.calm and self.env.now == self.calm_until:
            self._end_calm()

    def _end_calm(self) -> None:
        """Turn every calm job back into a process that finishes the call it is in, then carries on."""
        now = self.env.now
        self.calm = False
        for job in self.jobs:
            ends = job.call_ends
            if ends is None:
                continue
            done = bisect.bisect_left(ends, now)      # calls that answered before now
            job.steps_done += done
            job.call_ends = None
            self.handovers.extend(ends[:done])
            self.env.process(self._finish_call(job, ends[done]))

    def _finish_call(self, job: Job, end: float):
        """The rest of a calm job: its call to A answers at ``end``, then the job goes on as usual."""
        yield At(self.env, end, None)
        a = self.providers[0]
        a.inflight -= 1
        if self.waiters:
            self.waiters.popleft().succeed()
        a.succeeded += 1
        a.spend += a.price
        self._breaker_success(a)
        job.steps_done += 1
        yield from self.work(job)

    def settle_calm(self, until: float) -> None:
        """At the end of the run: the handovers before ``until`` of the jobs still running calm."""
        for job in self.jobs:
            if job.call_ends is None:
                continue
            done = bisect.bisect_left(job.call_ends, until)
            job.steps_done += done
            self.handovers.extend(job.call_ends[:done])

    def handed_over(self, samples: list[Sample]) -> list[Sample]:
        """Samples and A's totals with every handover counted: one answer and one new call each."""
        a, count = self.providers[0], len(self.handovers)
        spend, price = a.spend, a.price
        for _ in range(count):
            spend += price              # the same sum, price by price, as when counted one at a time
        a.spend = spend
        a.sent += count
        a.succeeded += count
        # how many handovers came before each sample: a sort and a search in NumPy (exact for floats),
        # for the 54,000 handovers of a peak hour
        before = np.searchsorted(np.sort(np.array(self.handovers, dtype=float)),
                                 np.array([s.t for s in samples], dtype=float), side="left").tolist()
        fixed = []
        for s, n in zip(samples, before):
            fixed.append(s if n == 0 else Sample(
                s.t, s.queued_acme, s.queued_others, s.running_acme, s.running_others, s.inflight,
                (s.sent[0] + n, *s.sent[1:]), (s.succeeded[0] + n, *s.succeeded[1:]), s.breaker_closed))
        return fixed
