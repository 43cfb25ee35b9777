"""The grade sender: posts the outbox's scores (drills.store.lti_grades) to each LMS's AGS line item with
pylti1p3's Assignment and Grade Services client, which first gets an access token from the platform's token
URL with the tool's signed assertion. The LMS worker (`python -m deploy.lti.services`) runs it every few seconds.

A score the platform refuses, or cannot be reached for, stays in the outbox with its next try set later
(each wait twice the last, up to an hour), so an LMS outage delays grades and loses none. A score is marked
sent only once the platform has answered 2xx for it.
"""
from __future__ import annotations

import logging
from datetime import datetime, timezone

import requests
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade

from deploy.lti.app import Connectors
from deploy.lti.settings import LtiSettings
from drills.store.lti_grades import QueuedGrade

log = logging.getLogger("faultlines.lti.grades")


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def score_message(row: QueuedGrade) -> Grade:
    """The AGS score for a queued grade, stamped with the time it was queued (so a retry is the same score)."""
    return (Grade().set_score_given(row.given).set_score_maximum(row.maximum).set_timestamp(_iso(row.queued_at))
            .set_activity_progress(row.activity_progress).set_grading_progress(row.grading_progress)
            .set_user_id(row.user_id).set_comment(row.comment))


def why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"   # pylti1p3's names the URL, the status and the body


def send_due(store, settings: LtiSettings, limit: int = 50, connectors: Connectors | None = None) -> tuple[int, int]:
    """Post every due score once; returns (sent, failed). A token is fetched once per registration a pass, and
    after one failure the platform's other scores wait for the next pass, so an unreachable LMS costs one
    timeout a pass, not one per score."""
    connectors = connectors or Connectors(settings)
    sent = failed = 0
    failing: set[tuple[str, str]] = set()
    for row in store.due_lti_grades(limit):
        if (row.issuer, row.client_id) in failing:
            continue
        try:
            connector = connectors.require(row.issuer, row.client_id)
            service = AssignmentsGradesService(connector, {"scope": list(row.scopes), "lineitem": row.lineitem})
            service.put_grade(score_message(row))
        except (LtiException, LtiServiceException, requests.RequestException, ValueError) as error:
            retry_at = store.lti_grade_failed(row.id, why(error))
            log.warning("grade %s for attempt %s not sent (%s); next try at %s", row.id, row.attempt_id,
                        why(error), _iso(retry_at))
            connectors.forget(row.issuer, row.client_id)
            failing.add((row.issuer, row.client_id))
            failed += 1
        else:
            store.lti_grade_sent(row.id)
            sent += 1
    return sent, failed
