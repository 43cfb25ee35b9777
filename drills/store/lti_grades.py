"""Grade passback (LTI Assignment and Grade Services): where an LMS wants a learner's score, and the outbox
the tool's sender (deploy.lti.grades) empties.

A launch that carries an AGS line item records it as the learner's grade target in that class (for the drill
the link names, or for every drill when it names none). When an attempt of theirs finishes, or an instructor
marks it, the score is queued here with the progress the AGS score message carries; the sender posts each
queued score, and a refused or failed post is retried later, each wait twice the last (up to an hour), so an
LMS outage delays a grade but loses none. A score that a newer one for the same attempt overtook is not sent.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from drills.store.contract import StorePart

# Migration 41 (drills.store.migrations): where each learner's LMS wants their grades (per drill, or '' for every
# drill of the class), and the outbox of scores the sender posts and retries.
LTI_GRADES_MIGRATION = """
    CREATE TABLE lti_grade_targets (
        candidate_id BIGINT NOT NULL,
        drill_id VARCHAR NOT NULL,
        issuer VARCHAR NOT NULL,
        client_id VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        lineitem VARCHAR NOT NULL,
        scopes VARCHAR NOT NULL,
        updated_at DOUBLE NOT NULL,
        PRIMARY KEY (candidate_id, drill_id)
    );
    CREATE TABLE lti_grade_outbox (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        attempt_id BIGINT NOT NULL,
        issuer VARCHAR NOT NULL,
        client_id VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        lineitem VARCHAR NOT NULL,
        scopes VARCHAR NOT NULL,
        score_given DOUBLE NOT NULL,
        score_maximum DOUBLE NOT NULL,
        activity_progress VARCHAR NOT NULL,
        grading_progress VARCHAR NOT NULL,
        comment VARCHAR NOT NULL,
        queued_at DOUBLE NOT NULL,
        tries INTEGER NOT NULL DEFAULT 0,
        next_try_at DOUBLE NOT NULL,
        done_at DOUBLE,
        outcome VARCHAR NOT NULL DEFAULT '',
        last_error VARCHAR NOT NULL DEFAULT ''
    );
    CREATE INDEX idx_lti_grade_outbox_attempt ON lti_grade_outbox (attempt_id);
    """
COMPLETED = "Completed"                    # activityProgress: the learner finished the attempt
FULLY_GRADED, PENDING_MANUAL = "FullyGraded", "PendingManual"   # gradingProgress
RETRY_FIRST_S = 10.0                       # the wait after a first failed post; each later one doubles
RETRY_LONGEST_S = 3600.0                   # and never exceeds an hour
ERROR_CHARS = 500                          # of a failure's message, kept for whoever looks at the outbox


@dataclass(frozen=True)
class Grade:
    """What an attempt's score message says: points of the most, progress (FULLY_GRADED or PENDING_MANUAL),
    and a comment. ui.lms.grade_of makes one from an attempt's results."""
    given: float
    maximum: float
    grading_progress: str
    comment: str


def retry_wait(tries: int) -> float:
    """Seconds to wait after the `tries`-th failed post of a score."""
    return min(RETRY_FIRST_S * 2 ** (tries - 1), RETRY_LONGEST_S)


@dataclass(frozen=True)
class QueuedGrade:
    """One score in the outbox, with where it goes (the platform, its client, the line item, the user)."""
    id: int
    attempt_id: int
    issuer: str
    client_id: str
    user_id: str
    lineitem: str
    scopes: tuple[str, ...]
    given: float
    maximum: float
    activity_progress: str
    grading_progress: str
    comment: str
    queued_at: float
    tries: int
    done_at: float | None    # when it was sent, or overtaken by a newer score; None while it waits
    outcome: str             # '' while it waits, then 'sent' or 'superseded'
    last_error: str


_OUTBOX_COLUMNS = ("id, attempt_id, issuer, client_id, user_id, lineitem, scopes, score_given, score_maximum, "
                   "activity_progress, grading_progress, comment, queued_at, tries, done_at, outcome, last_error")


def _queued(row) -> QueuedGrade:
    values = list(row)
    values[6] = tuple(json.loads(values[6]))
    return QueuedGrade(*values)


class LtiGradesStore(StorePart):
    """Grade targets from launches, and the outbox of scores for the LMS."""

    def set_lti_grade_target(self, candidate_id: int, launch: dict) -> None:
        """Remember where the LMS of `launch` wants this candidate's grades (its newest launch wins)."""
        if not launch.get("lineitem"):
            return
        drill_id = str(launch.get("drill_id") or "")   # the scoped drill the link names; '' for every drill
        with self._transaction() as cur:
            cur.execute("DELETE FROM lti_grade_targets WHERE candidate_id = ? AND drill_id = ?",
                        [candidate_id, drill_id])
            cur.execute("INSERT INTO lti_grade_targets (candidate_id, drill_id, issuer, client_id, user_id, lineitem, "
                        "scopes, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [candidate_id, drill_id, launch["issuer"], launch["client_id"], launch["subject"],
                         launch["lineitem"], json.dumps(list(launch.get("ags_scopes") or [])), self.clock()])

    def queue_lti_grade(self, attempt_id: int, grade: Grade) -> bool:
        """Queue the attempt's grade for its LMS; False (nothing queued) when no launch asked for it."""
        target = self._one(
            "SELECT t.issuer, t.client_id, t.user_id, t.lineitem, t.scopes FROM attempts a "
            "JOIN lti_grade_targets t ON t.candidate_id = a.candidate_id AND t.drill_id IN (a.drill_id, '') "
            "WHERE a.id = ? ORDER BY t.drill_id DESC LIMIT 1", [attempt_id])
        if target is None:
            return False
        now = self.clock()
        with self._transaction() as cur:
            cur.execute("INSERT INTO lti_grade_outbox (attempt_id, issuer, client_id, user_id, lineitem, scopes, "
                        "score_given, score_maximum, activity_progress, grading_progress, comment, queued_at, "
                        "next_try_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [attempt_id, *target, grade.given, grade.maximum, COMPLETED, grade.grading_progress,
                         grade.comment, now, now])
        return True

    def due_lti_grades(self, limit: int = 50) -> list[QueuedGrade]:
        """Unsent scores whose time has come, oldest first. A score a newer one of the same attempt and line
        item overtook is marked superseded here and not returned: only the newest one counts."""
        now = self.clock()
        with self._transaction() as cur:
            cur.execute("UPDATE lti_grade_outbox SET done_at = ?, outcome = 'superseded' WHERE done_at IS NULL "
                        "AND EXISTS (SELECT 1 FROM lti_grade_outbox n WHERE n.attempt_id = lti_grade_outbox.attempt_id "
                        "AND n.lineitem = lti_grade_outbox.lineitem AND n.user_id = lti_grade_outbox.user_id "
                        "AND n.id > lti_grade_outbox.id)", [now])
        rows = self._all(f"SELECT {_OUTBOX_COLUMNS} FROM lti_grade_outbox WHERE done_at IS NULL AND next_try_at <= ? "
                         "ORDER BY id LIMIT ?", [now, limit])
        return [_queued(r) for r in rows]

    def lti_grade_sent(self, grade_id: int) -> None:
        with self._transaction() as cur:
            cur.execute("UPDATE lti_grade_outbox SET done_at = ?, outcome = 'sent', tries = tries + 1, last_error = '' "
                        "WHERE id = ? AND done_at IS NULL", [self.clock(), grade_id])

    def lti_grade_failed(self, grade_id: int, error: str) -> float:
        """Record a failed post and when to try again; returns that time."""
        with self._transaction() as cur:
            row = cur.execute("UPDATE lti_grade_outbox SET tries = tries + 1 WHERE id = ? AND done_at IS NULL "
                              "RETURNING tries", [grade_id]).fetchone()
            if row is None:
                return self.clock()
            retry_at = self.clock() + retry_wait(row[0])
            cur.execute("UPDATE lti_grade_outbox SET next_try_at = ?, last_error = ? WHERE id = ?",
                        [retry_at, str(error)[:ERROR_CHARS], grade_id])
        return retry_at

    def lti_outbox(self, attempt_id: int | None = None) -> list[QueuedGrade]:
        """Every queued score (of one attempt, if given), sent or not, oldest first."""
        where, params = ("WHERE attempt_id = ?", [attempt_id]) if attempt_id is not None else ("", [])
        return [_queued(r) for r in self._all(f"SELECT {_OUTBOX_COLUMNS} FROM lti_grade_outbox {where} ORDER BY id",
                                              params)]
