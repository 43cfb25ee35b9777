"""The instructor passphrase: salted PBKDF2 hashes, constant-time checks, configuration and the CLI."""
from __future__ import annotations

import hmac
import io
import subprocess
import sys
from pathlib import Path

import pytest

from drills import access

ROOT = Path(__file__).resolve().parent.parent
FAST = 1_000  # iterations: the minimum parse_hash accepts, so tests stay quick


def test_right_passphrase_verifies_and_wrong_ones_do_not():
    encoded = access.hash_passphrase("correct horse battery", iterations=FAST)
    assert access.verify("correct horse battery", encoded)
    for wrong in ("correct horse batter", "Correct horse battery", "", " correct horse battery", "x" * 10_000):
        assert not access.verify(wrong, encoded)


def test_each_hash_has_its_own_salt_and_keeps_no_passphrase():
    first = access.hash_passphrase("correct horse battery", iterations=FAST)
    second = access.hash_passphrase("correct horse battery", iterations=FAST)
    assert first != second
    assert "horse" not in first
    scheme, iterations, salt, digest = first.split("$")
    assert (scheme, int(iterations), len(bytes.fromhex(salt)), len(bytes.fromhex(digest))) == \
        ("pbkdf2_sha256", FAST, 16, 32)


def test_default_hash_uses_many_iterations():
    assert access.parse_hash(access.hash_passphrase("correct horse battery")).iterations >= 200_000


def test_digests_are_compared_in_constant_time(monkeypatch):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    access.verify("correct horse battery", access.hash_passphrase("correct horse battery", iterations=FAST))
    assert len(calls) == 1


@pytest.mark.parametrize("bad", ["", "plain-text-passphrase", "pbkdf2_sha256$abc$00$00",
                                 "pbkdf2_sha256$1000$zz$" + "0" * 64, "md5$1000$" + "00" * 16 + "$" + "00" * 32,
                                 "pbkdf2_sha256$10$" + "00" * 16 + "$" + "00" * 32,
                                 "pbkdf2_sha256$1000$" + "00" * 16 + "$" + "00" * 8])
def test_a_damaged_hash_is_reported_not_accepted(bad):
    with pytest.raises(access.AccessError):
        access.verify("correct horse battery", bad)


@pytest.mark.parametrize("weak", ["", "short", "x" * (access.MAX_PASSPHRASE + 1)])
def test_weak_or_huge_passphrases_are_refused(weak):
    with pytest.raises(access.AccessError):
        access.hash_passphrase(weak, iterations=FAST)


def test_environment_wins_over_the_secret(monkeypatch):
    monkeypatch.delenv(access.HASH_ENV, raising=False)
    assert access.configured_hash(None) is None
    assert access.configured_hash("  ") is None
    assert access.configured_hash("from-secret") == "from-secret"
    monkeypatch.setenv(access.HASH_ENV, " from-env ")
    assert access.configured_hash("from-secret") == "from-env"


def test_cli_prints_a_hash_that_verifies(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct horse battery\n"))
    assert access.main([]) == 0
    encoded = capsys.readouterr().out.strip().splitlines()[0]
    assert access.verify("correct horse battery", encoded)


def test_cli_refuses_a_short_passphrase(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    assert access.main([]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "at least" in captured.err


def test_cli_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "drills.access"], input="correct horse battery\n", text=True,
                          capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0
    assert access.verify("correct horse battery", done.stdout.splitlines()[0])
    assert access.HASH_ENV in done.stderr


def test_cli_help_explains_and_does_not_read_stdin():
    done = subprocess.run([sys.executable, "-m", "drills.access", "--help"], stdin=subprocess.PIPE, text=True,
                          capture_output=True, cwd=ROOT, timeout=60)   # stdin stays open: a wait would time out
    assert done.returncode == 0
    assert "usage: python -m drills.access" in done.stdout
    assert access.HASH_ENV in done.stdout and "echo" in done.stdout


def test_cli_refuses_an_unknown_flag(capsys):
    with pytest.raises(SystemExit) as stopped:
        access.main(["--bogus"])
    assert stopped.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


# -- a signed-in session is tied to the hash in force ---------------------------------------------
INSTRUCTOR_PAGE = "pages/instructor.py"
OLD_PASSPHRASE, NEW_PASSPHRASE = "correct horse battery", "a different staple entirely"


@pytest.fixture
def instant_failures():
    """Wrong tries no longer sleep in the page (the store throttles them), so there is nothing to stub."""


def _signed_in_page(app_test, monkeypatch, passphrase=OLD_PASSPHRASE):
    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase(passphrase, iterations=FAST))
    at = app_test(INSTRUCTOR_PAGE).run()
    at.text_input[0].input("Prof Ada")
    at.text_input[1].input(passphrase)
    next(b for b in at.button if b.label == "Sign in").click()
    at.run()
    assert not at.exception, at.exception
    assert _signed_in(at)
    return at


def _signed_in(at) -> bool:
    return any("Signed in as" in c.value for c in at.caption)


@pytest.mark.parametrize("new_passphrase", [NEW_PASSPHRASE, OLD_PASSPHRASE], ids=["new passphrase", "same, new salt"])
def test_a_signed_in_session_must_sign_in_again_after_the_hash_changes(app_test, monkeypatch, instant_failures,
                                                                      new_passphrase):
    at = _signed_in_page(app_test, monkeypatch)
    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase(new_passphrase, iterations=FAST))
    at.run()
    assert not _signed_in(at), "the old sign-in outlived the hash it was made under"
    assert [b.label for b in at.button if b.label == "Sign in"] == ["Sign in"]


def test_a_session_signed_out_by_a_hash_change_stays_out_when_the_old_hash_returns(app_test, monkeypatch,
                                                                                    instant_failures):
    at = _signed_in_page(app_test, monkeypatch)
    old = access.configured_hash()
    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase(NEW_PASSPHRASE, iterations=FAST))
    at.run()
    monkeypatch.setenv(access.HASH_ENV, old)      # rolled back: the session was already told to sign in again
    at.run()
    assert not _signed_in(at)


def test_a_session_is_signed_out_while_no_usable_hash_is_configured(app_test, monkeypatch, instant_failures):
    at = _signed_in_page(app_test, monkeypatch)
    old = access.configured_hash()
    monkeypatch.setenv(access.HASH_ENV, "damaged")
    at.run()
    assert not _signed_in(at)
    monkeypatch.setenv(access.HASH_ENV, old)
    at.run()
    assert not _signed_in(at)


def test_a_remembered_sign_in_holds_only_under_its_own_hash():
    first = access.hash_passphrase(OLD_PASSPHRASE, iterations=FAST)
    second = access.hash_passphrase(OLD_PASSPHRASE, iterations=FAST)
    remembered = access.fingerprint(first)
    assert first not in remembered, "the session keeps a fingerprint, not the hash"
    assert access.session_still_valid(remembered, first)
    assert not access.session_still_valid(remembered, second)
    assert not access.session_still_valid(remembered, None)
    assert not access.session_still_valid(None, first) and not access.session_still_valid(True, first)
