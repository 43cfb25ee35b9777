"""Numbers the README and the authoring guide promise, written here as they are written there, never imported
from the code's constants: a passphrase of 10 to 256 characters, and a varying drill's 1,000 combinations at
least. bench/mutants.py moves each constant by one either way (drills/mutants.yaml) and these tests fail."""
from __future__ import annotations

import functools

import pytest

from drills import access, lint
from drills.draws import asked_givens
from drills.loader import load_catalogue
from drills.schema import Vary

FAST = 1_000   # PBKDF2 iterations: the fewest a hash may carry, so the boundary tests run quickly


@pytest.mark.parametrize("length", [10, 11, 255, 256])
def test_a_passphrase_of_10_to_256_characters_is_hashed_and_verifies(length):
    passphrase = "p" * length
    encoded = access.hash_passphrase(passphrase, iterations=FAST)
    assert access.verify(passphrase, encoded)


@pytest.mark.parametrize("length", [0, 9, 257])
def test_a_passphrase_shorter_than_10_or_longer_than_256_is_refused(length):
    with pytest.raises(access.AccessError):
        access.hash_passphrase("p" * length, iterations=FAST)


def test_a_passphrase_longer_than_256_characters_never_verifies():
    encoded = access.hash_passphrase("p" * 256, iterations=FAST)
    assert not access.verify("p" * 257, encoded)


def test_the_refusal_says_the_limits():
    with pytest.raises(access.AccessError, match="at least 10 characters"):
        access.hash_passphrase("p" * 9, iterations=FAST)
    with pytest.raises(access.AccessError, match="under 256 characters"):
        access.hash_passphrase("p" * 257, iterations=FAST)


@functools.cache
def _catalogue():
    return load_catalogue()


def _drawing_from(combinations: int):
    """A shipped drill whose only varying given a question uses draws from `combinations` values."""
    drill = _catalogue().drills["one_tenant"].drill
    asked = sorted(asked_givens(drill))
    written = {g.name: g.value for g in drill.givens}[asked[0]]
    vary = Vary(choices=tuple(written + k for k in range(combinations)))
    return drill.model_copy(update={"givens": tuple(
        g.model_copy(update={"vary": vary if g.name == asked[0] else None}) for g in drill.givens)})


def test_a_drill_drawing_from_1000_combinations_passes():
    assert list(lint.rule_draw_space(_drawing_from(1000))) == []


@pytest.mark.parametrize("combinations", [999, 10])
def test_a_drill_drawing_from_fewer_than_1000_combinations_is_refused(combinations):
    [finding] = lint.rule_draw_space(_drawing_from(combinations))
    assert f"only {combinations} combinations" in finding.message and "at least 1000 combinations" in finding.message
