"""The grading key: a drill as rows SQL can join answers against (truths, bands, right options), stored
once in grading_keys, and every piece of SQL that grades an answer by joining it to the key.
"""
from __future__ import annotations

import hashlib
import threading
import weakref
from dataclasses import dataclass
from typing import Callable, Collection, Mapping

from drills import scoring
from drills.loader import LoadedDrill
from drills.reports import source
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.store import AttemptStore
from drills.variants import WRITTEN, drawn_numbers, in_variant, varies

NOTE_SCORE_SQL = " ".join(f"WHEN '{k}' THEN {v}" for k, v in scoring.NOTE_SCORES.items())
_EPS = 1e-9  # the same slack scoring.grade_numeric allows at the tolerance edge


# -- the drill as a key the SQL can join against ---------------------------------------------
@dataclass(frozen=True)
class DrillKey:
    """What SQL needs to grade a drill: one row per question, one per (question, skill) pair."""

    drill_id: str
    question_ids: tuple[str, ...]
    part_ids: tuple[str, ...]
    kinds: tuple[str, ...]
    truths: tuple[float | None, ...]    # None for choice and notes (and simulations without a reference run)
    bands: tuple[float | None, ...]
    right_choices: tuple[str | None, ...]
    skill_pairs: tuple[tuple[str, str], ...]
    skill_ids: tuple[str, ...]
    skill_names: tuple[str, ...]
    part_titles: tuple[tuple[str, str, float], ...]   # (part id, title, suggested minutes)
    # The draws attempts made (their `variant`, each from its own seed), each with every question's
    # (truth, band) in question order. `truths` and `bands` above are draw 0, the numbers as written; a
    # draw the key was built without gets no rows.
    variant_grades: tuple[tuple[int, tuple[tuple[float | None, float | None], ...]], ...] = ()
    # Each graded draw's numbers as the board and the export show them (drills.variants.drawn_numbers).
    numbers: tuple[tuple[int, str], ...] = ()
    # The (variant, graded seed) pairs attempts drew with a graded seed of their own (drills.disclosure), each
    # with every question's (truth, band): their simulation questions graded against the runs at that seed.
    seeded_grades: tuple[tuple[tuple[int, int], tuple[tuple[float | None, float | None], ...]], ...] = ()

    @classmethod
    def from_loaded(cls, loaded: LoadedDrill,
                    sim_truths: Mapping[str, float] | Callable[..., Mapping[str, float]] | None = None,
                    variants: Collection[int | tuple[int, int]] | None = None) -> DrillKey:
        """`sim_truths`: the reference run of each simulation-backed question (left ungraded without it), or a
        function giving them for a variant of the drill (runs of presets that read the drill's numbers) and,
        as its second argument, an attempt's graded seed (drills.disclosure.graded_seed_of; none for seed 0).

        `variants`: the draws to grade besides the written numbers, the ones attempts drew, each a draw number
        or a (draw number, graded seed) pair (aggregates.variants_drawn; a function above runs only their
        simulations); None grades the written numbers only.
        """
        def truths_of(variant: LoadedDrill, seed: int = 0) -> Mapping[str, float] | None:
            if not callable(sim_truths):
                return sim_truths
            return sim_truths(variant, seed) if seed else sim_truths(variant)

        pairs = {(v, 0) if isinstance(v, int) else (int(v[0]), int(v[1])) for v in (variants or ())}
        loaded = in_variant(loaded, WRITTEN)
        drill = loaded.drill
        parts = scoring._part_of(drill)  # noqa: SLF001 - the one place that maps questions to parts
        qids, pids, kinds, truths, bands, rights, skill_pairs = [], [], [], [], [], [], []
        for q, (truth, band) in zip(drill.all_questions(), _grades(loaded, truths_of(loaded))):
            right = q.answer if isinstance(q, ChoiceQuestion) else None
            qids.append(q.id)
            pids.append(parts[q.id])
            kinds.append(q.kind)
            truths.append(truth)
            bands.append(band)
            rights.append(right)
            skill_pairs.extend((q.id, s) for s in q.skills)

        def graded(number: int, seed: int = 0) -> list[tuple[float | None, float | None]]:
            variant = in_variant(loaded, number)
            return _grades(variant, truths_of(variant, seed))

        if not varies(drill):   # every draw is the written numbers
            pairs = {(WRITTEN, seed) for _, seed in pairs}
        drawn = sorted({v for v, _ in pairs} - {WRITTEN})
        variant_grades = tuple((v, tuple(graded(v))) for v in sorted({v for v, seed in pairs if not seed} - {WRITTEN}))
        seeded_grades = tuple(((v, seed), tuple(graded(v, seed))) for v, seed in sorted(pairs) if seed)
        numbers = tuple((v, drawn_numbers(in_variant(loaded, v))) for v in [WRITTEN, *drawn])
        return cls(drill.id, tuple(qids), tuple(pids), tuple(kinds), tuple(truths), tuple(bands), tuple(rights),
                   tuple(skill_pairs), tuple(s.id for s in drill.rubric), tuple(s.name for s in drill.rubric),
                   tuple((p.id, p.title, p.minutes) for p in drill.parts), variant_grades, numbers, seeded_grades)

    @property
    def fingerprint(self) -> str:
        """Names the whole key: the same drill content, reference truths and graded variants give the same id."""
        whole = (self.drill_id, self.question_ids, self.part_ids, self.kinds, self.truths, self.bands,
                 self.right_choices, self.skill_pairs, self.variant_grades, self.seeded_grades)
        return hashlib.sha256(repr(whole).encode()).hexdigest()[:24]

    @property
    def possible(self) -> int:
        return len(self.question_ids)

    def rows(self) -> list[tuple]:
        """The grading_keys rows: (question, part, kind, truth, band, right choice, position, variant, graded seed)."""
        out = []
        for (variant, seed), grades in (((WRITTEN, 0), tuple(zip(self.truths, self.bands))),
                                        *(((v, 0), g) for v, g in self.variant_grades), *self.seeded_grades):
            out.extend((qid, pid, kind, truth, band, right, position, variant, seed)
                       for position, (qid, pid, kind, right, (truth, band)) in enumerate(
                           zip(self.question_ids, self.part_ids, self.kinds, self.right_choices, grades), start=1))
        return out


def _grades(loaded: LoadedDrill, sim_truths: Mapping[str, float] | None) -> list[tuple[float | None, float | None]]:
    """Each question's (truth, band) in `loaded`'s numbers; None for choice, notes and unknown simulations."""
    out = []
    for q in loaded.drill.all_questions():
        known = None
        if isinstance(q, NumericQuestion):
            known = loaded.values.get(q.id) if q.sim is None else (sim_truths or {}).get(q.id)
        out.append((None, None) if known is None else (float(known), scoring.tolerance_band(float(known), q.tolerance)))
    return out


_known_keys: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # store -> key ids already stored
_key_lock = threading.Lock()


def ensure_key(store: AttemptStore, key: DrillKey) -> None:
    """Store the key's rows in grading_keys once, so every report joins a small table by its id."""
    with _key_lock:
        if key.fingerprint in _known_keys.get(store, ()):
            return
    rows = key.rows()
    writes = []
    absent = " WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE key_id = ?)"
    if rows:
        writes.append((
            "INSERT INTO grading_keys SELECT ?, * FROM (VALUES "
            + ", ".join(["(?, ?, ?, ?::DOUBLE, ?::DOUBLE, ?::VARCHAR, ?::BIGINT, ?::INTEGER, ?::BIGINT)"] * len(rows))
            + ") AS v"
            + absent.format(table="grading_keys"),
            [key.fingerprint, *[x for row in rows for x in row], key.fingerprint]))
    if key.skill_pairs:
        writes.append((
            "INSERT INTO grading_key_skills SELECT ?, * FROM (VALUES "
            + ", ".join(["(?, ?)"] * len(key.skill_pairs)) + ") AS v" + absent.format(table="grading_key_skills"),
            [key.fingerprint, *[x for pair in key.skill_pairs for x in pair], key.fingerprint]))
    stored = source.one(store, "SELECT (SELECT COUNT(*) FROM grading_keys WHERE key_id = ?), "
                               "(SELECT COUNT(*) FROM grading_key_skills WHERE key_id = ?)",
                        [key.fingerprint, key.fingerprint])
    if writes and tuple(stored) != (len(rows), len(key.skill_pairs)):
        source.rewrite(store, lambda cur: [cur.execute(sql, params) for sql, params in writes])
    with _key_lock:
        _known_keys.setdefault(store, set()).add(key.fingerprint)


def key_ctes(store: AttemptStore, key: DrillKey) -> tuple[str, list]:
    """CTEs `qkey` and `qskill` read from the stored key (stored first if need be)."""
    ensure_key(store, key)
    return stored_key_ctes(key)


def stored_key_ctes(key: DrillKey) -> tuple[str, list]:
    """CTEs `qkey` and `qskill` from grading_keys, with the grading tests worked out per question.

    The band edges carry the scorer's slack and the kind tests are booleans, so the million-row passes
    compare doubles and never strings.
    """
    return (f"""
        qkey AS (
            SELECT question_id, part_id, kind, truth, band, right_choice, position, variant AS key_variant,
                   graded_seed AS key_seed,
                   kind = 'numeric' AND truth IS NOT NULL AS graded_numeric, kind = 'choice' AS graded_choice,
                   band * (1 + {_EPS}) AS full_band, 2 * band * (1 + {_EPS}) AS half_band
            FROM grading_keys WHERE key_id = ?
        ),
        qskill AS (SELECT question_id, skill_id FROM grading_key_skills WHERE key_id = ?)""",
            [key.fingerprint, key.fingerprint])


# -- answers joined to the key --------------------------------------------------------------
# Every query that grades answers (alias `an`) joins the key (alias `k`) with this clause; the
# attempts joined before it carry the attempt's `variant`, so each answer meets its own variant's truth.
# The pair is compared as one value: as two columns (USING (question_id, variant)) the planner saw a join
# between the attempts and the key on the variant alone and made it first, every attempt times its
# variant's key rows (680k rows on the million-answer board), before meeting the answers; as one
# value the key can only meet an answer that already carries its attempt's variant (question_errors in
# half the time). The key's own column is `key_variant`, so the bare `variant` here is the attempt's; likewise
# `graded_seed` (source.GRADED_SEED), which meets the key's `key_seed`.
KEY_JOIN = "JOIN qkey k ON (k.question_id, k.key_variant, k.key_seed) = (an.question_id, variant, graded_seed)"

# An answer's grade from the key's precomputed columns: the same tests as scoring.grade_numeric (less
# the share given up to hints) and grade_choice, with no string comparison left in the per-row work.
# Notes stay NULL here: they are graded by their latest self-rating, joined in separately (`rated`),
# because a million-row join for a few thousand ratings would dominate the query.
SCORE = """CASE
                     WHEN an.skipped THEN 0.0
                     WHEN k.graded_numeric THEN
                       (1 - an.hint_cost) * CASE WHEN abs(an.value - k.truth) <= k.full_band THEN 1.0
                            WHEN abs(an.value - k.truth) <= k.half_band THEN 0.5 ELSE 0.0 END
                     WHEN k.graded_choice THEN CASE WHEN an.choice = k.right_choice THEN 1.0 ELSE 0.0 END
                   END"""
IN_RANGE = """CASE WHEN k.graded_numeric AND NOT an.skipped AND an.low IS NOT NULL
                        THEN an.low <= k.truth AND k.truth <= an.high END"""

# Every answer with its grade (the export's rows).
GRADED = (f"""
        graded AS (
            SELECT an.attempt_id, an.question_id, k.part_id, k.kind, k.truth, k.position, an.value, an.low, an.high,
                   an.choice, an.notes, an.skipped, an.locked_at, {SCORE} AS score, {IN_RANGE} AS in_range
            FROM answers an JOIN att USING (attempt_id) {KEY_JOIN}
        )""", [])

# Notes: each answered note's latest self-rating as its score.
RATINGS = ("""
        ratings AS (
            SELECT n.attempt_id, n.question_id, arg_max(n.rating, (n.rated_at, n.id)) AS rating
            FROM note_ratings n WHERE n.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        ),
        rated AS (
            SELECT r.attempt_id, r.question_id, CASE r.rating """ + NOTE_SCORE_SQL + """ END AS note_score
            FROM ratings r JOIN answers an USING (attempt_id, question_id) WHERE NOT an.skipped
        )""", [])
