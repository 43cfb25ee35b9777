"""AppTest: every candidate page runs, Break 1 plays end to end, bad input stores nothing."""
from __future__ import annotations

import pytest

from drills.loader import load_catalogue
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.store import AttemptStore
from drills.variants import in_variant

LOCK = "Lock in"


def _texts(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "error", "info", "warning", "success", "title"):
        parts.extend(str(e.value) for e in getattr(at, kind))
    return "\n".join(parts)


def _open(app_test, page: str, **params):
    """Run a page inside the app's navigation (pages link to each other, so they need the frame)."""
    at = app_test("app.py")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    return at


def _start(app_test, handle="ada", cohort="", code=""):
    at = app_test("app.py").run()
    assert not at.exception
    at.text_input(key="candidate_handle").input(handle)
    at.text_input(key="candidate_cohort").input(cohort)
    if code:
        at.text_input(key="candidate_code").input(code)
    at.button(key="start_button::one_tenant").click().run()
    return at


def _go(at, part_id):
    at.selectbox(key="part_select").set_value(part_id).run()
    assert not at.exception, at.exception


def _lock_question(at, question, truth_like: float | None = None):
    key = f"lock::{question.id}"
    if isinstance(question, NumericQuestion):
        at.text_input(key=f"{key}::value").input(str(truth_like if truth_like is not None else 1))
    elif isinstance(question, ChoiceQuestion):
        at.radio(key=f"{key}::choice").set_value(question.answer)
    else:
        at.text_area(key=f"{key}::notes").input("rate limit, running cap, idempotency key")
    next(b for b in at.button if b.label == LOCK).click().run()
    assert not at.exception, at.exception


def test_catalogue_page_lists_the_drill(app_test):
    at = app_test("app.py").run()
    assert not at.exception
    assert "One Tenant Takes Everyone Down" in _texts(at) + " ".join(s.value for s in at.subheader)
    # The whole drill asks for more than its clock, so the card leads with the practice that fits and the
    # shorter practice is the highlighted way in.
    first_card = next(m.value for m in at.markdown if m.value.startswith("**Fits the 45-minute clock:**"))
    assert "the essentials path" in first_card and "deeper practice for a longer session" in first_card
    assert "overruns" not in _texts(at)
    assert at.button(key="start_button::one_tenant").proto.type == "secondary"
    assert at.button(key="start_scope::one_tenant").proto.type == "primary"


def test_the_handle_and_cohort_survive_a_reload_through_the_url(app_test):
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada").run()
    at.text_input(key="candidate_cohort").input("north").run()
    assert [at.query_params.get("handle"), at.query_params.get("cohort")] in (["ada", "north"], [["ada"], ["north"]])
    reloaded = _open(app_test, "pages/home.py", handle="grace", cohort="south")   # a new session on that URL
    assert reloaded.text_input(key="candidate_handle").value == "grace"
    assert reloaded.text_input(key="candidate_cohort").value == "south"
    reloaded.text_input(key="candidate_cohort").input("").run()
    assert "cohort" not in reloaded.query_params


@pytest.mark.parametrize("page, expected", [("pages/drill.py", "No drill in progress"),
                                            ("pages/results.py", "Results belong to an attempt")])
def test_attempt_pages_explain_what_to_do_without_an_attempt(app_test, page, expected):
    at = _open(app_test, page)
    assert not at.exception
    assert expected in _texts(at)


@pytest.mark.parametrize("page", ["pages/drill.py", "pages/results.py"])
def test_an_unknown_attempt_link_says_so(app_test, page):
    at = _open(app_test, page, attempt="nonsense")
    assert not at.exception
    assert [t.value for t in at.title] == ["Attempt link not recognised"]
    assert "copied whole" in _texts(at)


def test_break1_end_to_end(app_test, db_path):
    loaded = load_catalogue().drills["one_tenant"]
    at = _start(app_test)
    token = at.query_params["attempt"]
    assert at.title[0].value == loaded.drill.parts[0].title
    # Every attempt draws its own numbers: the right answers are this attempt's.
    loaded = in_variant(loaded, AttemptStore(db_path).attempt_by_token(token).variant)

    _go(at, "break1")
    part = loaded.drill.part("break1")
    reveal_first = next(b for b in at.button if b.label.startswith("Reveal:"))
    assert reveal_first.disabled, "the answer must stay shut until the questions are locked"
    assert "Truth:" not in _texts(at)
    for question in part.questions:
        truth = loaded.values.get(question.id)
        _lock_question(at, question, truth)
    store = AttemptStore(db_path)
    attempt = store.attempt_by_token(token)
    assert set(store.answers(attempt.id)) == {q.id for q in part.questions}
    assert [b for b in at.button if b.label == LOCK] == [], "locked questions show no form"

    for section in part.reveal:
        button = next(b for b in at.button if b.label.startswith("Reveal:"))
        assert not button.disabled
        button.click().run()
        assert not at.exception
    text = _texts(at)
    assert f"Truth: {loaded.values['b1_arrivals']:,.2f} jobs/s" in text
    assert ":green-badge[:material/check_circle: full marks]" in text
    assert len(store.reveals(attempt.id)) == len(part.reveal)

    # follow-up: its own lock-ins (some graded by a simulation), then its own reveal
    assert "Graded against a run of the **Hot shard** simulation" in _texts(at)
    assert not [e for e in at.expander if "run this answer was graded against" in e.label]
    for question in part.followup.questions:
        _lock_question(at, question, loaded.values.get(question.id))
    next(b for b in at.button if b.label == "Reveal: The follow-up answer").click().run()
    assert "shuffle sharding" in _texts(at)
    assert [e for e in at.expander if "Hot shard run this answer was graded against" in e.label]

    # self-rate the notes answer, then score the rubric and finish
    at.radio(key="rate::b1_plan").set_value("full").run()
    assert store.note_ratings(attempt.id) == {"b1_plan": "full"}
    _go(at, "score")
    for skill in loaded.drill.rubric:
        at.radio(key=f"rubric::{skill.id}").set_value("strong")
    next(b for b in at.button if b.label == "Save my scores").click().run()
    assert {h.skill_id for h in store.rubric_history(attempt.id)} == {s.id for s in loaded.drill.rubric}
    finish = next(b for b in at.button if b.label == "Finish and see results")
    assert finish.disabled, "finishing with open questions needs a confirmation"
    assert any("questions are still open" in w.value for w in at.warning)
    at.checkbox(key="finish_anyway").check().run()
    next(b for b in at.button if b.label == "Finish and see results").click().run()
    assert not at.exception
    assert store.attempt_by_token(token).finished_at is not None
    assert "Five or more strong" in _texts(at)


def test_an_unrated_notes_answer_is_flagged_before_finishing_and_explained_after(app_test, db_path):
    at = _start(app_test)
    loaded = load_catalogue().drills["one_tenant"]
    part = next(p for p in loaded.drill.parts if any(q.kind == "notes" for q in p.questions))
    notes = next(q for q in part.questions if q.kind == "notes")
    _go(at, part.id)
    at.text_area(key=f"lock::{notes.id}::notes").input("cap the tenant, then drain")
    at.button(key=f"lock::{notes.id}::submit").click().run()
    assert not at.exception, at.exception
    _go(at, "score")
    assert any("1 notes answer still needs your self-rating" in w.value for w in at.warning)
    finish = next(b for b in at.button if b.label == "Finish and see results")
    assert finish.disabled, "an unrated notes answer asks for the same confirmation as open questions"
    at.checkbox(key="finish_anyway").check().run()
    next(b for b in at.button if b.label == "Finish and see results").click().run()
    assert not at.exception, at.exception
    shown = _texts(at)
    assert "1 notes answer was never self-rated, so it earns no marks." in shown
    assert "still need your self-rating" not in shown, "a finished attempt can no longer be rated"
    assert "Not every skill was scored before the attempt finished" in shown


def test_locked_answers_are_read_only_after_a_rerun(app_test, db_path):
    at = _start(app_test)
    _go(at, "board")
    question = load_catalogue().drills["one_tenant"].drill.question("jobs_in_flight")
    at.text_input(key="lock::job_duration::value").input("32")
    next(b for b in at.button if b.label == LOCK).click().run()
    fresh = _open(app_test, "pages/drill.py", attempt=at.query_params["attempt"], part="board")
    keys = {t.key for t in fresh.text_input}
    assert "lock::job_duration::value" not in keys
    assert f"lock::{question.id}::value" in keys
    assert "Your guess: **32 s**" in _texts(fresh)


@pytest.mark.parametrize("guess, low, high, message", [
    ("3,2", "", "", "Use a dot for decimals"),
    ("nan", "", "", "finite"), ("inf", "", "", "finite"), ("", "", "", "Enter your best guess"),
    ("1e300", "", "", "too large"), ("100", "300", "200", "above the high end"),
])
def test_bad_numeric_input_shows_a_message_and_stores_nothing(app_test, db_path, guess, low, high, message):
    at = _start(app_test)
    _go(at, "board")
    at.text_input(key="lock::job_duration::value").input(guess)
    at.text_input(key="lock::job_duration::low").input(low)
    at.text_input(key="lock::job_duration::high").input(high)
    next(b for b in at.button if b.label == LOCK).click().run()
    assert any(message in e.value for e in at.error)
    store = AttemptStore(db_path)
    assert store.answers(store.attempt_by_token(at.query_params["attempt"]).id) == {}


@pytest.mark.parametrize("handle", ["<script>alert(1)</script>", "x" * 10_000, ""])
def test_bad_handles_start_nothing(app_test, db_path, handle):
    at = _start(app_test, handle=handle)
    assert at.error, "a clear message must appear"
    assert "attempt" not in at.query_params
    assert AttemptStore(db_path).attempts() == []


def test_notes_with_html_are_shown_as_plain_text(app_test):
    at = _start(app_test)
    _go(at, "break1")
    payload = "<img src=x onerror=alert(1)> **not bold**"
    at.text_area(key="lock::b1_plan::notes").input(payload)
    notes_index = [b for b in at.button if b.label == LOCK]
    notes_index[-1].click().run()  # the notes form is the last one in Break 1
    assert payload in [t.value for t in at.text]
    assert all(payload not in m.value for m in at.markdown)


def test_content_edits_show_without_a_restart_and_broken_files_are_named(app_test, tmp_path, monkeypatch):
    import os
    import shutil

    from drills.loader import CONTENT_DIR

    folder = tmp_path / "content"
    folder.mkdir()
    target = folder / "one_tenant.yaml"
    shutil.copy(CONTENT_DIR / "one_tenant.yaml", target)
    monkeypatch.setenv("FAULTLINES_CONTENT", str(folder))
    monkeypatch.setattr("ui.context.CATALOGUE_RECHECK_S", 0.0)   # look at the files on every call, not once a second
    at = app_test("app.py").run()
    assert "One Tenant Takes Everyone Down" in [s.value for s in at.subheader]

    target.write_text(target.read_text().replace("title: One Tenant Takes Everyone Down", "title: Edited Title", 1))
    os.utime(target, ns=(1, target.stat().st_mtime_ns + 10**9))
    (folder / "broken.yaml").write_text("id: broken\nparts: [\n")
    at.run()
    assert "Edited Title" in [s.value for s in at.subheader]
    assert any("broken.yaml" in e.value for e in at.error), "a broken drill is named, the others still load"


def test_a_zero_guess_does_not_break_the_results_chart_and_a_negative_one_is_refused(app_test, db_path):
    at = _start(app_test)
    _go(at, "board")
    for question_id, guess in (("job_duration", "0"), ("jobs_in_flight", "-5")):
        at.text_input(key=f"lock::{question_id}::value").input(guess)
        next(b for b in at.button if b.label == LOCK).click().run()
    assert any("cannot be negative" in e.value for e in at.error)   # -5 jobs is refused; 0 is a real guess
    store = AttemptStore(db_path)
    attempt = store.attempt_by_token(at.query_params["attempt"])
    assert set(store.answers(attempt.id)) == {"job_duration"}
    store.finish(attempt.id)   # an open attempt's results withhold truths not yet revealed
    results = _open(app_test, "pages/results.py", attempt=at.query_params["attempt"])
    assert not results.exception
    assert any("1 guess at or below zero" in c.value for c in results.caption)
    assert "Locked in" in [m.label for m in results.metric]


def test_the_sidebar_pacing_follows_the_part_the_candidate_moves_to(app_test):
    drill = load_catalogue().drills["one_tenant"].drill
    at = _start(app_test)
    for part in drill.parts[:3]:
        assert at.title[0].value == part.title
        pacing = "\n".join(t.value for t in at.sidebar.text)
        assert f"▶ {part.title} —" in pacing, pacing      # the marker is on this part, not the one left behind
        assert pacing.count("▶") == 1
        next(b for b in at.button if b.label == "Next →").click().run()
        assert not at.exception, at.exception
    ahead = next(c.value for c in at.sidebar.caption if c.value.startswith("Pacing:"))
    assert ahead.startswith("Pacing: 3 parts ahead"), ahead   # part 4 within the first minutes


def test_saving_some_of_the_rubric_keeps_those_scores(app_test, db_path):
    drill = load_catalogue().drills["one_tenant"].drill
    at = _start(app_test)
    token = at.query_params["attempt"]
    _go(at, "score")
    next(b for b in at.button if b.label == "Save my scores").click().run()
    assert any("at least one skill" in e.value for e in at.error)
    store = AttemptStore(db_path)
    attempt = store.attempt_by_token(token)
    assert store.rubric_history(attempt.id) == []
    first, second, *rest = drill.rubric
    at.radio(key=f"rubric::{first.id}").set_value("strong")
    at.radio(key=f"rubric::{second.id}").set_value("weak")
    next(b for b in at.button if b.label == "Save my scores").click().run()
    assert not at.exception, at.exception
    saved = {(h.skill_id, h.level) for h in store.rubric_history(attempt.id)}
    assert saved == {(first.id, "strong"), (second.id, "weak")}
    assert any(f"Saved 2 of {len(drill.rubric)} skills" in s.value for s in at.success)   # in the page,
    assert not at.toast                                                                    # not over it
    assert at.radio(key=f"rubric::{first.id}").value == "strong"   # shown again after the rerun


def test_skipping_says_how_many_questions_it_forfeits_and_records_them_as_skipped(app_test, db_path):
    loaded = load_catalogue().drills["one_tenant"]
    part = loaded.drill.part("break1")
    at = _start(app_test)
    _go(at, "break1")
    _lock_question(at, part.questions[0], loaded.values.get(part.questions[0].id))
    left = len(part.questions) - 1
    confirm = at.button(key="skip::break1")
    assert confirm.label == f"Skip {left} questions"
    assert any(f"{left} unanswered questions" in m.value for m in at.markdown)
    confirm.click().run()
    assert not at.exception, at.exception
    store = AttemptStore(db_path)
    answers = store.answers(store.attempt_by_token(at.query_params["attempt"]).id)
    assert [q.id for q in part.questions if answers[q.id].skipped] == [q.id for q in part.questions[1:]]
    assert not answers[part.questions[0].id].skipped
    assert not next(b for b in at.button if b.label.startswith("Reveal:")).disabled
