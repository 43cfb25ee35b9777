"""The catalogue's Start press is acted on before the catalogue draws (ui/drill/start.start_at_once): a refused start
is tried once and explained once beside the inputs and once beside the button; a good one opens the drill."""
from __future__ import annotations

from drills.store.accounts import AccountsStore


def _press(app_test, handle: str, code: str = ""):
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input(handle)
    if code:
        at.text_input(key="candidate_code").input(code)
    at.button(key="start_button::one_tenant").click().run()
    assert not at.exception, at.exception
    return at


def test_a_refused_start_tries_the_resume_code_once_and_says_why_beside_inputs_and_button(app_test, monkeypatch):
    owner = _press(app_test, "grace")
    assert "attempt" in owner.query_params and any("resume code is" in s.value for s in owner.success)
    tries = []
    checked = AccountsStore.check_resume_code
    monkeypatch.setattr(AccountsStore, "check_resume_code",
                        lambda self, *args, **kwargs: tries.append(args) or checked(self, *args, **kwargs))
    guessed = _press(app_test, "grace", code="AAAA-AAAA")
    assert "attempt" not in guessed.query_params
    assert len(tries) == 1, f"one press tried the code {len(tries)} times (each try counts against the throttle)"
    refusals = [e.value for e in guessed.error if "not the one of" in e.value]
    assert len(refusals) == 2 and sum("see “Who are you?” at the top" in r for r in refusals) == 1, refusals
    assert guessed.title[0].value == "Fault Lines", "the refused press leaves the visitor on the catalogue"


def test_a_start_press_opens_the_drill(app_test):
    at = _press(app_test, "hopper")
    assert "attempt" in at.query_params
    assert any(s.value.startswith("Your personal resume code is") for s in at.success), [s.value for s in at.success]


def test_a_look_alike_handle_is_refused_with_the_handle_it_reads_as(app_test):
    """ADA and `ada ` were taken freely beside ada; now they are ada, and the message says so."""
    owner = _press(app_test, "ada")
    code = next(s.value for s in owner.success if "resume code is" in s.value).split("**")[1]
    for look_alike in ["ADA", "Ada  "]:
        refused = _press(app_test, look_alike)
        assert "attempt" not in refused.query_params
        said = [e.value for e in refused.error]
        assert any(f"“{look_alike.strip()}” (read the same as “ada”) is in use" in e for e in said), said
    back = _press(app_test, "ADA", code=code)
    assert "attempt" in back.query_params, "with ada's code, ADA is ada"
