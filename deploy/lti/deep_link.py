"""Deep linking (LTI Deep Linking 2.0): an instructor adding Fault Lines to a course picks a drill and how it is
taken (the whole drill, its essentials path, one break, or a live room) and the LMS gets one graded
LtiResourceLink content item, signed by the tool through pylti1p3's DeepLink.

The deep linking launch arrives at /lti/launch like any other and is checked the same way; the picker it
shows posts back to /lti/deep_link, which answers with the form that carries the signed response to the
LMS's return URL. What the picker needs between the two requests is kept in the tool's signed session.
"""
from __future__ import annotations

import html
import secrets
import time

from flask import request, session
from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem

from drills.loader import load_catalogue
from drills.scope import ESSENTIALS, FULL, scope_drill, scopes

LIVE = "live"                 # a live room: the instructor runs the drill with the class at once
PICK_LIFETIME_S = 3600.0      # how long the picker's answer is taken after the deep linking launch
SESSION_KEY = "fl_deep_link"


def choices() -> list[tuple[str, str, str, int]]:
    """(drill id, scope, label, questions) for every way an LMS link can take each drill of the catalogue."""
    out = []
    for drill_id, loaded in sorted(load_catalogue().drills.items()):
        drill = loaded.drill
        whole = len(drill.all_questions())
        out.append((drill_id, FULL, f"{drill.title}: the whole drill", whole))
        out += [(drill_id, s.id, f"{drill.title}: {'the essentials path' if s.id == ESSENTIALS else s.label}",
                 s.questions) for s in scopes(drill)]
        out.append((drill_id, LIVE, f"{drill.title}: a live room, the class together", whole))
    return out


def picker_page(launch: dict, deep_link_settings: dict, tool_url: str) -> str:
    """The instructor's choice of drill and scope for the deep linking `launch` (deploy.lti.app.launch_record),
    remembered in the session until it is posted."""
    token = secrets.token_urlsafe(16)
    session[SESSION_KEY] = {"iss": launch["issuer"], "client_id": launch["client_id"],
                            "deployment_id": launch["deployment_id"], "settings": deep_link_settings,
                            "token": token, "at": time.time()}
    rows = "".join(
        f"<li><label><input type=radio name=pick value='{html.escape(f'{d}|{s}')}' required> "
        f"{html.escape(label)} ({n} questions)</label></li>" for d, s, label, n in choices())
    return (f"<form method=post action='{html.escape(tool_url.rstrip('/') + '/deep_link')}' id=pick>"
            f"<input type=hidden name=token value='{token}'><ul>{rows}</ul>"
            f"<button type=submit>Add to the course</button></form>")


def resource_for(drill_id: str, scope: str, launch_url: str) -> DeepLinkResource:
    """The LtiResourceLink for a drill taken in `scope`, with a line item of one point per question."""
    loaded = load_catalogue().drills[drill_id]
    taken = loaded if scope == LIVE else scope_drill(loaded, scope)   # KeyError for a scope it lacks
    title = taken.drill.title + (" — live room" if scope == LIVE else "")
    item = (LineItem().set_score_maximum(len(taken.drill.all_questions())).set_label(title)
            .set_resource_id(f"{drill_id}|{scope}").set_tag("faultlines"))
    return (DeepLinkResource().set_url(launch_url).set_title(title).set_lineitem(item)
            .set_custom_params({"drill": drill_id, "scope": scope}))


def answer(conf, launch_url: str) -> tuple[str, int]:
    """The signed response for the posted choice, as the form that carries it to the LMS; or why not."""
    picked = session.get(SESSION_KEY) or {}
    if not picked or not secrets.compare_digest(str(request.form.get("token", "")), str(picked.get("token", ""))):
        return "<p>This choice does not belong to a deep linking launch of yours: add the tool again.</p>", 400
    if time.time() - float(picked.get("at", 0)) > PICK_LIFETIME_S:
        return "<p>This choice waited over an hour: add the tool again from the LMS.</p>", 400
    drill_id, _, scope = str(request.form.get("pick", "")).partition("|")
    registration = conf.find_registration_by_params(picked["iss"], picked["client_id"])
    try:
        resource = resource_for(drill_id, scope, launch_url)
    except KeyError:
        return "<p>Pick one of the drills listed.</p>", 400
    if registration is None:
        return "<p>This LMS is no longer registered with the tool.</p>", 400
    session.pop(SESSION_KEY, None)
    link = DeepLink(registration, picked["deployment_id"], picked["settings"])
    jwt_value = link.get_response_jwt([resource])
    return_url = html.escape(picked["settings"]["deep_link_return_url"])
    return (f"<form id=deep_link_response action='{return_url}' method=post>"
            f"<input type=hidden name=JWT value='{html.escape(jwt_value)}'>"
            "<button type=submit>Back to the LMS</button></form>"
            "<script>document.getElementById('deep_link_response').submit()</script>"), 200
