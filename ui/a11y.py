"""Keyboard and screen aids on every page: a focus ring on whatever has focus, a skip link, a navigation
screen readers can count, titles that fit a phone, and wide tables a keyboard can scroll.

The skip link is the first thing a Tab reaches (and where focus goes when the page or the drill's part
changes); it lands on the first open question (the first Lock in form's first field), or on the page's
title where there is no question to answer.
"""
from __future__ import annotations

import streamlit as st

from ui.identity import ACCOUNT_ROW
from ui.runtime.clean_html import CleanHtml, clean

# The theme's primary colour: 5.7:1 on white and 5.4:1 on the sidebar's grey, over the 3:1 a focus
# indicator needs. Streamlit's own cues (a faint background on links, a border tint on inputs) are not.
FOCUS_RING = "#1565c0"
SKIP_LINK_ID = "fl-skip-link"

_STYLE = f"""
<style>
:focus-visible {{ outline: 3px solid {FOCUS_RING} !important; outline-offset: 2px !important; }}
/* Fields whose focusable part sits inside a drawn box: ring the box. */
[data-baseweb="input"]:focus-within, [data-baseweb="textarea"]:focus-within,
[data-baseweb="select"]:focus-within, label[data-baseweb="radio"]:has(input:focus-visible),
label[data-baseweb="checkbox"]:has(input:focus-visible) {{
  outline: 3px solid {FOCUS_RING} !important; outline-offset: 1px !important; border-radius: 0.5rem;
}}
[data-baseweb="input"] input:focus-visible, [data-baseweb="textarea"] textarea:focus-visible,
[data-baseweb="select"] input:focus-visible, label[data-baseweb="radio"] input:focus-visible,
label[data-baseweb="checkbox"] input:focus-visible {{ outline: none !important; }}
/* A data grid draws on a canvas and focuses cells of a hidden table: ring the grid. */
[data-testid="stDataFrame"]:focus-within {{ outline: 3px solid {FOCUS_RING} !important; outline-offset: 2px !important; }}
/* A slider's range input is clipped to a pixel inside its thumb: ring the thumb. */
[data-testid="stSlider"] input[type="range"]:focus-visible {{ outline: none !important; }}
[data-testid="stSlider"] div:has(> div > input[type="range"]:focus-visible) {{
  outline: 3px solid {FOCUS_RING} !important; outline-offset: 2px !important;
}}
#{SKIP_LINK_ID} {{ position: fixed; left: 0.5rem; top: -4rem; z-index: 1000100; padding: 0.6rem 1rem;
  background: #ffffff; color: {FOCUS_RING}; border-radius: 0.5rem; font-weight: 600; text-decoration: underline; }}
#{SKIP_LINK_ID}:focus-visible {{ top: 0.5rem; }}   /* keyboard focus: a click that moves focus here shows nothing */
[data-testid="stElementContainer"]:has([data-fl-aids]) {{ display: none; }}
/* A collapsed sidebar is slid off screen but stays in the page: hidden, its links leave the Tab order
   and the accessibility tree until it is opened. */
section[data-testid="stSidebar"][data-collapsed="true"] {{ visibility: hidden; }}
/* The account's row in the page is for where the sidebar, with the same Sign out, starts collapsed. */
@media (min-width: 769px) {{ .st-key-{ACCOUNT_ROW.replace(":", "-")} {{ display: none !important; }} }}
/* Titles fit a phone: Streamlit's 2.75rem title wraps a drill's name over half a dozen lines. */
@media (max-width: 640px) {{
  [data-testid="stMain"] h1 {{ font-size: 1.75rem; line-height: 1.25; }}
  [data-testid="stMain"] h2 {{ font-size: 1.5rem; }}
}}
</style>
<span data-fl-aids hidden></span>
"""

# Outside React's root, so no rerun removes it; added once per page load. Streamlit's sanitiser drops a
# script whose text holds "<" before a letter or "/", so the comments below spell tags without brackets.
_SCRIPT = """
<script>
(function () {
  const ID = %(id)s;
  if (document.getElementById(ID)) return;
  function openQuestion() {
    for (const form of document.querySelectorAll('[data-testid="stMain"] [data-testid="stForm"]')) {
      const lock = [...form.querySelectorAll("button")].find((b) => b.innerText.includes("Lock in") && !b.disabled);
      if (!lock) continue;
      // A field not drawn yet (its code still loading) leaves the form's own button to land on.
      return form.querySelector('input:not([disabled]):not([type="hidden"]), textarea:not([disabled])') || lock;
    }
    return null;
  }
  const link = document.createElement("a");
  link.id = ID;
  link.href = "#";
  link.textContent = "Skip to the page";
  link.addEventListener("focus", () => {
    link.textContent = openQuestion() ? "Skip to the first open question" : "Skip to the page";
  });
  link.addEventListener("click", (event) => {
    event.preventDefault();
    let target = openQuestion();
    if (!target) {
      target = document.querySelector('[data-testid="stMain"] h1') || document.querySelector('[data-testid="stMain"]');
      if (target) target.setAttribute("tabindex", "-1");
    }
    if (target) { target.focus(); target.scrollIntoView({block: "center"}); }
  });
  document.body.prepend(link);
  // The navigation's sections are DIVs straight inside its UL, holding the LIs: a list that screen
  // readers cannot count. Each section becomes the list; the outer UL only groups them.
  function fixNavigation() {
    for (const ul of document.querySelectorAll('ul[data-testid="stSidebarNavItems"]')) {
      const sections = [...ul.children].filter((child) => child.tagName === "DIV");
      if (!sections.length) continue;
      if (ul.getAttribute("role") !== "none") ul.setAttribute("role", "none");
      for (const section of sections) if (section.getAttribute("role") !== "list") section.setAttribute("role", "list");
    }
  }
  // A table wider than the page (My history on a phone) scrolls sideways inside its own box, which a keyboard
  // cannot reach: while it overflows, the box takes focus (arrow keys scroll it) and says what it is.
  const SCROLLS = {tabindex: "0", role: "region", "aria-label": "Table, scrolls sideways"};
  function fixWideTables() {
    for (const box of document.querySelectorAll('[data-testid="stTable"] > div')) {
      const wide = box.scrollWidth > box.clientWidth + 1;
      if (wide === (box.getAttribute("tabindex") === "0")) continue;
      for (const [name, value] of Object.entries(SCROLLS)) wide ? box.setAttribute(name, value) : box.removeAttribute(name);
    }
  }
  const fixAll = () => { fixNavigation(); fixWideTables(); };
  fixAll();
  new MutationObserver(fixAll).observe(document.body, {childList: true, subtree: true});
  setInterval(fixWideTables, 1000);   // a resize, or fonts that load late, change a width without a mutation
  // Streamlit changes page or part without a page load, and focus stays on the button pressed at the
  // bottom. Like a fresh load, the next keystroke should start from the top: focus goes to the link.
  // Only a move the visitor asked for (a button or link pressed just before) moves focus.
  const where = () => location.pathname + "?" + (new URLSearchParams(location.search).get("part") || "");
  let last = where(), pressedAt = 0;
  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("button, a") && event.target !== link) pressedAt = Date.now();
  }, true);
  setInterval(() => {
    const now = where();
    if (now === last) return;
    last = now;
    if (Date.now() - pressedAt < 10000) { pressedAt = 0; link.focus(); }
  }, 250);
})();
</script>
"""


_AIDS = CleanHtml(clean(_STYLE + _SCRIPT % {"id": f'"{SKIP_LINK_ID}"'}))   # cleaned once, not on every run


def page_aids() -> None:
    """Draw the focus ring, the skip link, the navigation's list roles, the phone's title sizes and the wide
    tables' keyboard stop (style and script only: nothing takes space)."""
    st.html(_AIDS, unsafe_allow_javascript=True)
