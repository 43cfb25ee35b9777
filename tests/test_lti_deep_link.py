"""Deep linking against lti1p3platform (tests/lti_lms.py): the course's instructor adds Fault Lines through the
platform's LtiDeepLinkingRequest, picks a drill and scope in the tool, and the platform accepts the tool's
signed LtiDeepLinkingResponse (checked against the tool's JWKS) holding one graded LtiResourceLink; a launch
of that link then grades the scoped drill. A learner cannot add links, and a forged choice is refused."""
from __future__ import annotations

import re
from html import unescape

import httpx
import pytest

from drills.loader import load_catalogue
from drills.scope import scopes
from tests.lti_lms import MEMBERS, code_of, course_with_tool, launch_form, post, tool_key  # noqa: F401


@pytest.fixture
def lms(tmp_path, tool_key):
    with course_with_tool(tmp_path, tool_key, MEMBERS) as (course, url, store, _):
        yield course, url, store


def picker(course, user) -> tuple[httpx.Client, httpx.Response]:
    client, form = launch_form(course, user, deep_link=True)
    return client, post(client, form)


def pick(client, page: httpx.Response, url: str, choice: str) -> httpx.Response:
    token = re.search(r"name=token value='([^']+)'", page.text).group(1)
    return client.post(url + "/deep_link", data={"token": token, "pick": choice})


def test_an_instructor_adds_a_drills_essentials_path_and_the_course_launches_it(lms):
    course, url, store = lms
    client, page = picker(course, "teacher-1")
    assert page.status_code == 200, page.text
    offered = set(re.findall(r"name=pick value='([^']+)'", page.text))
    assert {"one_tenant|full", "one_tenant|essentials", "one_tenant|live"} <= offered
    reply = pick(client, page, url, "one_tenant|essentials")
    assert reply.status_code == 200, reply.text
    action = unescape(re.search(r"action='([^']+)'", reply.text).group(1))
    jwt_value = unescape(re.search(r"name=JWT value='([^']+)'", reply.text).group(1))
    assert action == course.url + "/deep_link_return"
    back = httpx.post(action, data={"JWT": jwt_value}, timeout=10)   # the browser carries it to the LMS
    assert back.status_code == 200 and "Added to the course" in back.text
    [[item]] = course.deep_link_items
    essentials = next(s for s in scopes(load_catalogue().drills["one_tenant"].drill) if s.id == "essentials")
    assert item["type"] == "ltiResourceLink" and item["url"] == url + "/launch"
    assert item["custom"] == {"drill": "one_tenant", "scope": "essentials"}
    assert item["lineItem"]["scoreMaximum"] == essentials.questions
    assert item["title"].endswith("essentials")

    course.custom = item["custom"]   # the LMS launches the link it made
    client, form = launch_form(course, "learner-1")
    launch = store.redeem_launch_code(code_of(post(client, form)))
    assert launch["drill_id"] == "one_tenant~essentials"


def test_a_live_room_link_grades_the_whole_drill(lms):
    course, url, store = lms
    client, page = picker(course, "teacher-1")
    pick(client, page, url, "one_tenant|live")
    course.custom = {"drill": "one_tenant", "scope": "live"}
    client, form = launch_form(course, "learner-1")
    assert store.redeem_launch_code(code_of(post(client, form)))["drill_id"] == "one_tenant"


def test_a_learner_cannot_add_links(lms):
    course, _, _ = lms
    _, page = picker(course, "learner-1")
    assert page.status_code == 403 and "name=pick" not in page.text


@pytest.mark.parametrize("forge", ["token", "drill", "session"])
def test_a_forged_or_unknown_choice_is_refused(lms, forge):
    course, url, _ = lms
    client, page = picker(course, "teacher-1")
    if forge == "token":
        reply = client.post(url + "/deep_link", data={"token": "made-up", "pick": "one_tenant|full"})
    elif forge == "drill":
        reply = pick(client, page, url, "no_such_drill|full")
    else:   # another browser, without the instructor's session
        token = re.search(r"name=token value='([^']+)'", page.text).group(1)
        reply = httpx.post(url + "/deep_link", data={"token": token, "pick": "one_tenant|full"}, timeout=10)
    assert reply.status_code == 400 and "JWT" not in reply.text
    assert course.deep_link_items == []
