"""No emoji where a user reads: a browser without an emoji font (Debian's Chromium) draws them as empty boxes.

Icons are Streamlit's Material icons (`:material/lock:`), which ship with Streamlit, or plain words.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What users read: the frame, the pages, the UI pieces, and the drills' own text.
SCANNED = [ROOT / "app.py", *(ROOT / d for d in ("pages", "ui", "drills/content"))]
TEXT_SUFFIXES = {".py", ".yaml", ".yml", ".md", ".css", ".html", ".js"}
# Emoji and the symbol blocks that carry them (the clock faces, the play/skip buttons, dingbats, pictographs),
# and the selector that asks for an emoji drawing of the character before it.
EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u23E9-\u23FF\uFE0F]")


def _files():
    for place in SCANNED:
        yield from ([place] if place.is_file() else
                    (p for p in sorted(place.rglob("*")) if p.suffix in TEXT_SUFFIXES and p.is_file()))


def emoji_in(text: str) -> list[tuple[int, str]]:
    """(line number, the emoji) for every emoji in `text`."""
    return [(n, m.group()) for n, line in enumerate(text.splitlines(), 1) for m in EMOJI.finditer(line)]


def test_the_scan_catches_the_emoji_that_drew_as_boxes():
    for glyph in ("⏱", "⏰", "⏭️", "🔒", "✅", "❌", "🟡", "💡", "🎲", "🔑", "🐃", "⛓️", "👑", "▶️", "↩️", "⚠"):
        assert emoji_in(f'st.button("{glyph} Go")'), glyph
    # Arrows, the middle dot and the triangles DejaVu draws stay allowed.
    assert not emoji_in('st.button("Next →") · "▶ Play" · "† marks an override" · ":material/lock: Lock in"')


def test_no_emoji_where_a_user_reads():
    found = [f"{path.relative_to(ROOT)}:{line}: {glyph!r}"
             for path in _files() for line, glyph in emoji_in(path.read_text(encoding="utf-8"))]
    assert not found, "use a Material icon (:material/name:) or words instead:\n" + "\n".join(found)
