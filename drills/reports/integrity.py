"""Who looked before locking in, per attempt: the timeline's flags counted across a class in one query.

The rules are the timeline's (drills.reports.timeline): a reveal is early when a question it answers was
not yet locked or skipped; a simulation visit is early when the frame recorded open questions it answers.
"""
from __future__ import annotations

import pandas as pd

from drills.disclosure import FOLLOWUP
from drills.loader import LoadedDrill
from drills.records import EventKind
from drills.reports import source
from drills.reports.source import Filters, with_ctes
from drills.store import AttemptStore

MAIN = "main"   # the gate of a part's own reveal sections (the follow-up's is FOLLOWUP)

COLUMNS = ["attempt_id", "candidate_id", "handle", "cohort", "variant", "started_at", "finished_at",
           "sims_before_lockin", "reveals_before_lockin", "hints_opened", "hint_cost", "results_views",
           "overtime_s", "late_lockins", "flags"]


def gates(loaded: LoadedDrill) -> tuple[list[str], list[str], list[str]]:
    """(part, gate, question) columns: which questions each reveal waits for, as the timeline reads them."""
    parts, kinds, questions = [], [], []
    for part in loaded.drill.parts:
        for gate, asked in ((MAIN, part.questions), (FOLLOWUP, part.followup.questions if part.followup else ())):
            for q in asked:
                parts.append(part.id)
                kinds.append(gate)
                questions.append(q.id)
    return parts, kinds, questions


_SQL = f"""
        grants AS (
            SELECT attempt_id, SUM(seconds) AS extra_s FROM time_grants
            WHERE attempt_id IN (SELECT attempt_id FROM att) GROUP BY attempt_id
        ),
        ev AS (SELECT * FROM attempt_events WHERE attempt_id IN (SELECT attempt_id FROM att)),
        gate AS (SELECT unnest(?::VARCHAR[]) AS part_id, unnest(?::VARCHAR[]) AS gate,
                        unnest(?::VARCHAR[]) AS question_id),
        early_reveals AS (
            SELECT e.attempt_id, COUNT(*) AS n FROM ev e
            WHERE e.kind = 'revealed' AND EXISTS (
                SELECT 1 FROM gate g
                WHERE g.part_id = e.part_id
                  AND g.gate = CASE WHEN json_extract_string(e.detail, '$.section') = '{FOLLOWUP}'
                                    THEN '{FOLLOWUP}' ELSE '{MAIN}' END
                  AND NOT EXISTS (SELECT 1 FROM answers an WHERE an.attempt_id = e.attempt_id
                                  AND an.question_id = g.question_id AND an.locked_at <= e.happened_at))
            GROUP BY e.attempt_id
        ),
        counted AS (
            SELECT attempt_id,
                   COUNT(*) FILTER (WHERE kind = '{EventKind.SIM_OPENED}'
                                    AND COALESCE(json_array_length(detail, '$.questions'), 0) > 0) AS sims,
                   COUNT(*) FILTER (WHERE kind = '{EventKind.HINT_OPENED}') AS hints,
                   COUNT(*) FILTER (WHERE kind = '{EventKind.RESULTS_VIEWED}') AS results,
                   MIN(happened_at) FILTER (WHERE kind = 'finished') AS finished_at,
                   -- the candidate's own last activity: instructors' grants and overrides are not theirs
                   MAX(happened_at) FILTER (WHERE kind <> 'extra_time' AND NOT (kind = 'scored' AND
                       json_extract_string(detail, '$.scorer') = 'instructor')) AS last_at
            FROM ev GROUP BY attempt_id
        ),
        costs AS (
            SELECT an.attempt_id, SUM(an.hint_cost) AS hint_cost,
                   COUNT(*) FILTER (WHERE an.locked_at > att.started_at + att.time_box_s + COALESCE(g.extra_s, 0))
                       AS late
            FROM answers an JOIN att USING (attempt_id) LEFT JOIN grants g USING (attempt_id)
            GROUP BY an.attempt_id
        )
        SELECT att.attempt_id, att.candidate_id, att.handle, att.cohort, att.variant, att.started_at, c.finished_at,
               COALESCE(c.sims, 0) AS sims_before_lockin, COALESCE(r.n, 0) AS reveals_before_lockin,
               COALESCE(c.hints, 0) AS hints_opened, COALESCE(k.hint_cost, 0.0) AS hint_cost,
               CASE WHEN c.finished_at IS NULL THEN COALESCE(c.results, 0)
                    ELSE (SELECT COUNT(*) FROM ev WHERE ev.attempt_id = att.attempt_id
                          AND ev.kind = '{EventKind.RESULTS_VIEWED}' AND ev.happened_at < c.finished_at) END
                   AS results_views,
               GREATEST(0, COALESCE(c.finished_at, c.last_at, att.started_at) - att.started_at
                           - att.time_box_s - COALESCE(g.extra_s, 0)) AS overtime_s,
               COALESCE(k.late, 0) AS late_lockins
        FROM att LEFT JOIN counted c USING (attempt_id) LEFT JOIN early_reveals r USING (attempt_id)
        LEFT JOIN costs k USING (attempt_id) LEFT JOIN grants g USING (attempt_id)
        ORDER BY att.started_at, att.attempt_id"""


def integrity(store: AttemptStore, loaded: LoadedDrill, filters: Filters) -> pd.DataFrame:
    """One row per attempt: simulations opened and reveals pressed before lock-in, graded hints opened and
    the marks they cost, results pages viewed while open, time past the box and lock-ins made there."""
    head, params = with_ctes(filters.sql())
    df = source.frame(store, head + "," + _SQL, params + list(gates(loaded)))
    df["flags"] = df["sims_before_lockin"] + df["reveals_before_lockin"] + df["results_views"] \
        + (df["overtime_s"] > 0).astype(int)
    return df[COLUMNS]


def looks_first(table: pd.DataFrame) -> pd.DataFrame:
    """The table in the order an instructor reads it: attempts with the most looks before lock-in (simulations,
    reveals, results viewed while open) first, then those only past the box, longest first; ties by start."""
    looks = table["sims_before_lockin"] + table["reveals_before_lockin"] + table["results_views"]
    order = table.assign(_looks=looks).sort_values(["_looks", "overtime_s"], ascending=False, kind="stable")
    return order.drop(columns="_looks")
