"""LTI 1.3 against a platform the project did not write (lti1p3platform, tests/lti_lms.py), over HTTP on
127.0.0.1: a course member's launch through the tool's real /lti/login and /lti/launch into the app's class,
and each refusal the issue names, every token made and signed by the platform's own launch code: a replayed
launch (its nonce), a missing or wrong state, a wrong audience, an expired token, an unknown deployment and a
bad signature (a key the platform never published, under its published kid)."""
from __future__ import annotations

from html import unescape

import httpx
import pytest

from tests.lti_lms import (CLAIM_DEPLOYMENT, MEMBERS, code_of, course_with_tool, launch_form, pem_pair,  # noqa: F401
                           post, tool_key)

AUD = "aud"


@pytest.fixture(scope="module")
def stranger_pem():
    return pem_pair()[0]


@pytest.fixture
def lms(tmp_path, tool_key):
    """(course, tool URL, store, settings): the platform and the tool, each registered with the other."""
    with course_with_tool(tmp_path, tool_key, MEMBERS) as found:
        yield found


def test_a_learner_launches_from_the_course_into_its_class(lms):
    course, url, store, _ = lms
    client, form = launch_form(course, "learner-1")
    assert form["action"] == url + "/launch"
    reply = post(client, form)
    assert reply.status_code == 200, reply.text
    launch = store.redeem_launch_code(code_of(reply))
    assert launch["issuer"] == course.issuer and launch["client_id"] == "fl-tool" and launch["deployment_id"] == "dep-1"
    assert launch["subject"] == "learner-1" and launch["instructor"] is False
    assert launch["context_id"] == "course-42" and launch["custom"] == {"drill": "one_tenant"}
    assert launch["lineitem"] == course.lineitem_url()
    visit = store.lti_visit(launch)
    assert store.class_info(visit.cohort).title == "Systems 101"
    assert store.account_cohorts(visit.account.id) == [(visit.cohort, "Ada Lovelace")]


def test_the_course_instructor_launches_as_an_instructor_of_the_class(lms):
    course, _, store, _ = lms
    client, form = launch_form(course, "teacher-1")
    visit = store.lti_visit(store.redeem_launch_code(code_of(post(client, form))))
    assert visit.instructor and "grace@example.org" in store.class_info(visit.cohort).instructors


def refused(reply, because: str) -> bool:
    """The tool refused the launch, for the reason given (pylti1p3's words or ours), and handed out no code."""
    return reply.status_code == 400 and "lti=" not in reply.text and because in unescape(reply.text)


def test_a_replayed_launch_is_refused(lms):
    course, _, _, _ = lms
    client, form = launch_form(course, "learner-1")
    assert post(client, form).status_code == 200
    assert refused(post(client, form), "already been used")        # the same browser posts it again
    assert refused(post(httpx.Client(timeout=10), form), "State not found")   # or another one does


@pytest.mark.parametrize("state, because", [(None, "Missing state"), ("", "Missing state"),
                                            ("a-state-the-tool-never-made", "State not found")],
                         ids=["absent", "empty", "wrong"])
def test_a_missing_or_wrong_state_is_refused(lms, state, because):
    course, _, _, _ = lms
    client, form = launch_form(course, "learner-1")
    assert refused(post(client, form, state=state), because)


@pytest.mark.parametrize("claims, because", [({AUD: "some-other-tool"}, "Registration not found"),
                                             ({CLAIM_DEPLOYMENT: "dep-unknown"}, "Unable to find deployment")],
                         ids=["audience", "deployment"])
def test_a_launch_for_another_tool_or_deployment_is_refused(lms, claims, because):
    course, _, _, _ = lms
    course.extra_claims = claims
    client, form = launch_form(course, "learner-1")
    assert refused(post(client, form), because)


def test_an_expired_launch_is_refused(lms):
    course, _, _, _ = lms
    course.id_token_expiration = -3600   # the platform signs a token whose exp is an hour before it was made
    client, form = launch_form(course, "learner-1")
    assert refused(post(client, form), "Signature has expired")


def test_a_launch_signed_with_a_key_the_platform_never_published_is_refused(lms, stranger_pem):
    course, _, _, _ = lms
    course.stranger_pem = stranger_pem
    client, form = launch_form(course, "learner-1")
    assert refused(post(client, form), "Signature verification failed")
    course.stranger_pem = None   # the same course, its own key: accepted, so the refusal was the signature's
    client, form = launch_form(course, "learner-1")
    assert post(client, form).status_code == 200
