"""Fill a store with a realistic demo cohort, written through the attempt store like real candidates.

`FAULTLINES_DB=/tmp/demo.duckdb python -m drills.demo --candidates 40` (FAULTLINES_DB decides where).
"""
from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

from drills import answers as checks
from drills.disclosure import LEGACY_SEED, draw_graded_seed, question_seed, sim_question_ids
from drills.loader import LoadedDrill, load_catalogue
from drills.records import EventKind
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion
from drills.backends import open_store
from drills.store import DB_ENV, AnswerEntry, AttemptStore, RevealEntry, database_path
from drills.variants import in_variant, variant_for

DAY_S = 86_400.0
DEMO_INSTRUCTOR = "demo instructor"
SECOND_INSTRUCTOR = "demo moderator"   # reads a share of the overridden attempts again
SECOND_OPINION_SHARE = 0.5
FIRST_NAMES = ("ada", "grace", "alan", "edsger", "barbara", "ken", "radia", "leslie", "margaret", "donald",
               "frances", "john", "katherine", "tony", "shafi", "whitfield", "jean", "butler", "lynn", "niklaus")
NOTE_PHRASES = ("per-tenant concurrency cap", "shed the noisy tenant first", "alert on queue age per tenant",
                "weighted fair queue", "pause the tenant's backlog", "refund duplicate jobs",
                "shuffle-shard the worker groups", "idempotency key on submit", "rate limit at the API",
                "page on p95 wait", "drain the backlog at a fixed rate", "tell the customer what happened")


class SimulatedClock:
    """The store's clock during the demo: time moves only when the demo says so."""

    def __init__(self, start: float):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


@dataclass(frozen=True)
class Persona:
    """How one demo candidate behaves: accuracy, how honest their ranges are, pace and diligence."""

    spread: float        # sigma of log(guess / truth)
    range_width: float   # their 80% range half-width in the same log units (too small: overconfident)
    gives_ranges: bool
    pace: float          # multiplier on the suggested minutes
    ability: float       # 0..1, drives choices, notes and self-scores


def make_persona(rng: random.Random) -> Persona:
    ability = rng.betavariate(2.5, 2.0)
    spread = 0.04 + (1 - ability) * 0.5
    honesty = rng.choice((0.45, 0.7, 1.0, 1.0, 1.3))   # most people are overconfident
    return Persona(spread, spread * 1.28 * honesty, rng.random() < 0.75, rng.lognormvariate(0, 0.3), ability)


# How often demo candidates do what the integrity tab counts. A graded hint is fair play; the rest is peeking.
HINT_SHARE = 0.15          # of hinted questions, opened the first hint (then, half the time, the next)
PEEKER_SHARE = 0.12        # of attempts, a candidate who looks before locking in
PEEK_SIM, PEEK_REVEAL, PEEK_RESULTS = 0.6, 0.3, 0.4   # a peeker's chances per sim part, per break, per attempt


class Conduct:
    """What one attempt does besides answering: hints opened and, for a peeker, looks before lock-in.

    Its own random stream (seeded from the attempt's seed), so the answers a seed gives stay the same.
    """

    def __init__(self, seed: int):
        self.rng = random.Random(seed * 7919 + 17)
        self.peeker = self.rng.random() < PEEKER_SHARE

    def hints_to_open(self, question) -> int:
        hints = getattr(question, "hints", ())
        if not hints or self.rng.random() >= HINT_SHARE:
            return 0
        return 2 if len(hints) > 1 and self.rng.random() < 0.5 else 1

    def peeks(self, chance: float) -> bool:
        return self.peeker and self.rng.random() < chance


def sim_page(preset_id: str) -> str:
    """The app page (its url path) that shows a preset's model, as the frame records a visit to it."""
    from sims.presets import PRESETS

    model = PRESETS[preset_id].model
    return "hot_tenant" if model == "partitions" else f"sim_{model}"


# Questions the cohort tends to get wrong, and which way (log bias of the guess).
HARD_QUESTIONS = {"b1_recovery_capped": -0.5, "b1_recovery_paused": -0.4, "f1_shuffle_overlap": 0.6,
                  "b1_acme_share": -0.35, "fallback_share": 0.25}


def _numeric_guess(rng: random.Random, persona: Persona, question: NumericQuestion, truth: float):
    bias = HARD_QUESTIONS.get(question.id, 0.0)
    log_error = rng.gauss(bias * (1.2 - persona.ability), persona.spread)
    guess = float(f"{truth * math.exp(log_error):.3g}")
    if not persona.gives_ranges:
        return guess, None, None
    low = float(f"{guess * math.exp(-persona.range_width * rng.uniform(0.7, 1.3)):.3g}")
    high = float(f"{guess * math.exp(persona.range_width * rng.uniform(0.7, 1.3)):.3g}")
    return guess, min(low, guess), max(high, guess)


class AttemptWriter:
    """Collects one attempt's answers and reveals at their simulated times; `flush` writes them in batches.

    One transaction per batch instead of one per write: a demo cohort takes seconds, not minutes, and the
    rows and events are the same as lock_answer and record_reveal would store one by one.
    """

    def __init__(self, store: AttemptStore, clock: SimulatedClock, attempt_id: int):
        self.store, self.clock, self.attempt_id = store, clock, attempt_id
        self.answers: list[AnswerEntry] = []
        self.reveals: list[RevealEntry] = []
        self.hint_costs: dict[str, float] = {}

    def lock(self, question_id: str, part_id: str, kind: str, **values) -> None:
        cost = self.hint_costs.pop(question_id, 0.0)
        self.answers.append(AnswerEntry(question_id, part_id, kind, at=self.clock(), hint_cost=cost, **values))

    def open_hints(self, question, part_id: str, count: int) -> None:
        """Open the question's first `count` hints now (through the store, as the hint buttons do); its
        lock-in then gives up their cost."""
        for index in range(count):
            self.store.open_hint(self.attempt_id, question.id, part_id, index)
        if count:
            self.hint_costs[question.id] = min(1.0, sum(h.cost for h in question.hints[:count]))

    def reveal(self, part_id: str, section: str) -> None:
        self.reveals.append(RevealEntry(part_id, section, at=self.clock()))

    def flush(self) -> None:
        self.store.lock_answers(self.attempt_id, self.answers)
        self.store.record_reveals(self.attempt_id, self.reveals)
        self.answers, self.reveals = [], []


def _answer(writer: AttemptWriter, clock: SimulatedClock, rng: random.Random, persona: Persona, loaded: LoadedDrill,
            part_id: str, question, sim_truths: Mapping[str, float], conduct: Conduct | None = None) -> None:
    clock.advance(rng.uniform(6, 22) * persona.pace)
    if conduct is not None:
        writer.open_hints(question, part_id, conduct.hints_to_open(question))
    if isinstance(question, NumericQuestion):
        truth = loaded.values.get(question.id) if question.sim is None else sim_truths.get(question.id)
        if truth is None:   # a simulation the caller did not run: recorded as skipped
            writer.lock(question.id, part_id, question.kind, skipped=True)
            return
        value, low, high = _numeric_guess(rng, persona, question, truth)
        entry = checks.numeric_entry(value, low, high)   # the same checks a real candidate passes
        writer.lock(question.id, part_id, question.kind, value=entry.value, low=entry.low, high=entry.high)
    elif isinstance(question, ChoiceQuestion):
        wrong = [o.id for o in question.options if o.id != question.answer]
        pick = question.answer if rng.random() < 0.35 + 0.6 * persona.ability else rng.choice(wrong)
        writer.lock(question.id, part_id, question.kind, choice=pick)
    elif isinstance(question, NotesQuestion):
        notes = "; ".join(rng.sample(NOTE_PHRASES, k=rng.randint(2, 6)))
        writer.lock(question.id, part_id, question.kind, notes=checks.notes_entry(notes))


def _peek(store: AttemptStore, writer: AttemptWriter, conduct: Conduct, attempt_id: int, part) -> None:
    """A peeker, before answering a part: opens its simulation, presses its first reveal, or looks at the
    results page, each as the app records it (a reveal before its questions are locked is flagged)."""
    questions = list(part.questions) + list(part.followup.questions if part.followup else ())
    sims = [q for q in questions if isinstance(q, NumericQuestion) and q.sim]
    if sims and conduct.peeks(PEEK_SIM):
        page = sim_page(sims[0].sim)
        store.log_event(attempt_id, EventKind.SIM_OPENED, None,
                        {"page": page, "questions": [q.id for q in sims if sim_page(q.sim) == page]})
    if part.kind == "break" and part.questions and part.reveal and conduct.peeks(PEEK_REVEAL):
        writer.reveal(part.id, part.reveal[0].stage)
    if conduct.peeks(PEEK_RESULTS / 4):   # about once an attempt over a drill's several parts
        store.log_event(attempt_id, EventKind.RESULTS_VIEWED)


def _self_level(rng: random.Random, persona: Persona) -> str:
    x = persona.ability + rng.gauss(0.08, 0.2)  # a slight optimism
    return "strong" if x > 0.62 else ("ok" if x > 0.35 else "weak")


_VARIANT_RUNS: dict[tuple, float] = {}


def _variant_sim_truths(loaded: LoadedDrill, graded_seed: int) -> dict[str, float]:
    """Each simulation question's run on this attempt's draw and graded seed, run once per preset, the numbers
    it reads and its seed."""
    from sims import presets  # only the CLI pays for the models

    truths = {}
    for q in loaded.drill.all_questions():
        if isinstance(q, NumericQuestion) and q.sim:
            seed = question_seed(graded_seed, q.id)
            key = (q.sim, presets.inputs_of([q.sim], loaded.values), seed)
            if key not in _VARIANT_RUNS:
                _VARIANT_RUNS[key] = presets.evaluate(q.sim, seed, loaded.values)
            truths[q.id] = _VARIANT_RUNS[key]
    return truths


def run_attempt(store: AttemptStore, clock: SimulatedClock, rng: random.Random, loaded: LoadedDrill,
                handle: str, cohort: str, persona: Persona, sim_truths: Mapping[str, float] | None = None) -> int:
    sim_truths = sim_truths or {}
    drill = loaded.drill
    seed = rng.randrange(2**31)
    variant = variant_for(store, drill, handle, seed)   # a retake draws its own numbers, as in the app
    attempt = store.start_attempt(drill.id, handle, cohort, drill.time_box_min * 60, seed=seed, variant=variant)
    if sim_question_ids(drill):   # as the app's start: its own graded seed (from the attempt's seed, so a demo repeats)
        graded_seed = store.keep_graded_seed(attempt.id, draw_graded_seed(random.Random(f"graded#{seed}")))
        if sim_truths:   # an attempt's simulations run on its own numbers and seed
            sim_truths = _variant_sim_truths(in_variant(loaded, variant), graded_seed)
    loaded = in_variant(loaded, variant)
    writer = AttemptWriter(store, clock, attempt.id)
    conduct = Conduct(seed)
    quits_after = len(drill.parts) if rng.random() < 0.88 else rng.randrange(1, len(drill.parts))
    for index, part in enumerate(drill.parts):
        if index >= quits_after:
            writer.flush()
            return attempt.id
        store.log_event(attempt.id, "opened", part.id)
        clock.advance(part.minutes * 60 * 0.15 * persona.pace * rng.uniform(0.6, 1.4))
        impatient = rng.random() < 0.06
        _peek(store, writer, conduct, attempt.id, part)
        for question in part.questions:
            if impatient:
                break
            _answer(writer, clock, rng, persona, loaded, part.id, question, sim_truths, conduct)
        if impatient and part.questions and part.reveal:
            # Skips to the answer: what is left is recorded as skipped, then revealed.
            for question in part.questions:
                writer.lock(question.id, part.id, question.kind, skipped=True)
        for section in part.reveal:
            clock.advance(rng.uniform(5, 20) * persona.pace)
            writer.reveal(part.id, section.stage)
        for question in part.questions:
            if isinstance(question, NotesQuestion):
                rating = "full" if persona.ability > 0.7 else ("partial" if persona.ability > 0.35 else "missed")
                store.rate_note(attempt.id, question.id, rating)
        if part.followup:
            for question in part.followup.questions:
                _answer(writer, clock, rng, persona, loaded, part.id, question, sim_truths, conduct)
            clock.advance(rng.uniform(10, 30) * persona.pace)
            writer.reveal(part.id, "followup")
        clock.advance(part.minutes * 60 * 0.1 * persona.pace * rng.uniform(0.5, 1.5))
    writer.flush()
    store.log_event(attempt.id, "opened", "score")
    for skill in drill.rubric:
        clock.advance(rng.uniform(5, 25))
        store.add_rubric_score(attempt.id, skill.id, _self_level(rng, persona), scorer="self", scorer_name=handle)
    clock.advance(rng.uniform(10, 40))
    store.finish(attempt.id)
    return attempt.id


def populate(store: AttemptStore, loaded: LoadedDrill, *, candidates: int, cohorts: tuple[str, ...],
             seed: int = 7, days: float = 21, now: float | None = None,
             sim_truths: Mapping[str, float] | None = None) -> dict[str, int]:
    """Write `candidates` candidates' attempts (some twice, a few unfinished), plus a few instructor actions."""
    rng = random.Random(seed)
    moderation = random.Random(seed + 101)   # its own stream: the cohort a seed gives stays the same
    now = time.time() if now is None else now
    real_clock = store.clock
    clock = SimulatedClock(now - days * DAY_S)
    store.clock = clock
    attempts = 0
    try:
        for i in range(candidates):
            handle = f"{FIRST_NAMES[i % len(FIRST_NAMES)]}{i // len(FIRST_NAMES) + 1 if i >= len(FIRST_NAMES) else ''}"
            cohort = cohorts[i % len(cohorts)] if cohorts else ""
            persona = make_persona(rng)
            tries = 2 if rng.random() < 0.2 else 1
            for attempt_no in range(tries):
                clock.now = now - rng.uniform(0.05, 1.0) * days * DAY_S + attempt_no * DAY_S
                clock.now = min(clock.now, now - 3600)
                attempt_id = run_attempt(store, clock, rng, loaded, handle, cohort, persona, sim_truths)
                attempts += 1
                if rng.random() < 0.08:
                    store.grant_time(attempt_id, 10 * 60, granted_by=DEMO_INSTRUCTOR,
                                     reason="Demo: accessibility adjustment")
                if rng.random() < 0.12:
                    skill = rng.choice(loaded.drill.rubric)
                    clock.advance(3600)
                    level = rng.choice(("ok", "weak"))
                    store.add_rubric_score(attempt_id, skill.id, level, scorer="instructor",
                                           scorer_name=DEMO_INSTRUCTOR,
                                           reason="Demo: the notes name the fix but not how it is detected.")
                    if moderation.random() < SECOND_OPINION_SHARE:   # a second reader, who mostly agrees
                        clock.advance(1800)
                        other = level if moderation.random() < 0.6 else ("ok" if level == "weak" else "strong")
                        store.add_rubric_score(attempt_id, skill.id, other, scorer="instructor",
                                               scorer_name=SECOND_INSTRUCTOR, reason="Demo: moderated.")
    finally:
        store.clock = real_clock
    return {"candidates": candidates, "attempts": attempts}


def reference_sim_truths(loaded: LoadedDrill, graded_seed: int = LEGACY_SEED) -> dict[str, float]:
    """One run of each simulation the drill embeds (on its variant's numbers, each at its question's seed of
    `graded_seed`), so demo guesses have something to aim at."""
    from sims import presets  # only the CLI pays for the models

    return {q.id: presets.evaluate(q.sim, question_seed(graded_seed, q.id), loaded.values)
            for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}


def open_problem(path: str, problem: Exception) -> str:
    """Why the store file would not open, in one line that says what to do."""
    first = (str(problem).strip().splitlines() or [type(problem).__name__])[0]
    holder = re.search(r"\(PID (\d+)\)", first)
    if "lock" in first.lower():
        who = f"process {holder.group(1)}" if holder else "another process"
        return f"{path} is locked by {who} (a running app server?); stop it, or set {DB_ENV} to another file."
    return f"cannot open {path}: {first}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drills.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=40, help="how many candidates (1 to 2000)")
    parser.add_argument("--cohort", action="append", default=None,
                        help="cohort code(s) to spread candidates over (repeatable); default: two demo cohorts")
    parser.add_argument("--drill", default="one_tenant", help="drill id (default one_tenant)")
    parser.add_argument("--seed", type=int, default=7, help="random seed, so a demo can be reproduced")
    args = parser.parse_args(argv)
    if not 1 <= args.candidates <= 2000:
        parser.error("--candidates must be between 1 and 2000")
    try:
        cohorts = tuple(checks.cohort_entry(c) for c in (args.cohort or ["demo-spring", "demo-autumn"]))
    except checks.InputError as problem:
        parser.error(f"--cohort: {problem}")
    catalogue = load_catalogue()
    loaded = catalogue.drills.get(args.drill)
    if loaded is None:
        parser.error(f"no drill {args.drill!r}; installed: {', '.join(catalogue.drills) or 'none'}")
    try:
        store = open_store(database_path())
    except Exception as problem:   # one line, not a traceback: usually a server has the file open
        # (a DuckDB error for a file, psycopg's OperationalError for an unreachable PostgreSQL URL)
        print(f"python -m drills.demo: {open_problem(database_path(), problem)}", file=sys.stderr)
        return 1
    try:
        written = populate(store, loaded, candidates=args.candidates, cohorts=cohorts, seed=args.seed,
                           sim_truths=reference_sim_truths(loaded))
    finally:
        store.close()
    print(f"Wrote {written['attempts']} attempts by {written['candidates']} candidates of {args.drill} "
          f"to {database_path()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
