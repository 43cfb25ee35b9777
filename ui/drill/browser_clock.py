"""The sidebar countdown drawn and ticked by the browser, so an idle candidate costs the server nothing.

The server sends numbers only (start, limit, its own clock); a small script counts down from them.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from drills.timebox import Clock, format_duration
from ui.runtime.clean_html import clean_around

# Minutes-left marks read out by screen readers (the live region is polite: it never interrupts).
ANNOUNCE_AT_S = (600, 300, 60)
LIVE_REGION_ID = "fl-clock-announcer"
# A stopwatch drawn inline, hidden from screen readers: an emoji would draw as an empty box where the
# reader's system has no emoji font (Debian's Chromium), and the words beside it say what it means.
STOPWATCH_SVG = ('<svg class="fl-icon" aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="16" '
                 'height="16" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round">'
                 '<circle cx="12" cy="13" r="8"/><path d="M12 9v4l2.5 2.5M9.5 2.5h5M12 2.5V5"/></svg>')

_STYLE = """
<style>
.fl-clock { font-family: inherit; margin-bottom: 0.5rem; }
.fl-clock .fl-label { font-size: 0.875rem; opacity: 0.8; }
.fl-clock .fl-value { font-size: 2.25rem; line-height: 1.2; font-variant-numeric: tabular-nums; }
.fl-clock .fl-over { background: rgba(255, 43, 43, 0.09); color: rgb(125, 53, 59); border-radius: 0.5rem;
                     padding: 0.75rem 1rem; margin-bottom: 0.5rem; }
.fl-clock .fl-bar { height: 0.5rem; border-radius: 0.25rem; background: rgba(151, 166, 195, 0.25);
                    overflow: hidden; margin-top: 0.5rem; }
.fl-clock .fl-fill { height: 100%; background: rgb(255, 75, 75); }
.fl-clock .fl-spent { font-size: 0.875rem; margin-top: 0.25rem; font-variant-numeric: tabular-nums; }
.fl-clock [hidden] { display: none !important; }
.fl-clock .fl-icon { width: 1em; height: 1em; vertical-align: -0.125em; }
/* The page's compact clock (and its wrapper, so no gap is left): only where the sidebar starts
   collapsed, at Streamlit's md breakpoint and below. */
[data-testid="stElementContainer"]:has(.fl-compact) { display: none; }
@media (max-width: 768px) {
  [data-testid="stElementContainer"]:has(.fl-compact) { display: block; }
  .fl-compact { display: flex; align-items: center; gap: 0.6rem; margin: 0; padding: 0.35rem 0.6rem;
                background: #ffffff; border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem;
                font-size: 0.95rem; font-variant-numeric: tabular-nums; }
  .fl-compact .fl-value { font-size: 1.1rem; line-height: 1.2; }
  .fl-compact .fl-label { font-size: 0.875rem; opacity: 1; }
  .fl-compact .fl-over { padding: 0.1rem 0.5rem; margin: 0; }
  .fl-compact .fl-bar { flex: 1; margin: 0; min-width: 3rem; }
  .fl-compact .fl-spent { margin: 0; font-size: 0.8rem; }
  /* Sticky under Streamlit's header: the element's own wrapper is the child of the page's block. */
  [data-testid="stElementContainer"]:has(.fl-compact) { position: sticky; top: 3.75rem; z-index: 100; }
}
</style>
"""

# Ticks once a second from the data-* numbers of the newest clock element. One interval per page:
# a rerun replaces the element (new numbers) and the same interval picks it up on its next tick.
_SCRIPT = """
<script>
(function () {
  const MARKS = %(marks)s;
  const LIVE_ID = %(live_id)s;
  function fmt(seconds) {
    const sign = seconds < 0 ? "-" : "";
    const total = Math.floor(Math.abs(seconds));
    const h = Math.floor(total / 3600), m = Math.floor((total %% 3600) / 60), s = total %% 60;
    const two = (n) => String(n).padStart(2, "0");
    return sign + (h ? h + ":" + two(m) + ":" + two(s) : two(m) + ":" + two(s));
  }
  function liveRegion() {
    let live = document.getElementById(LIVE_ID);
    if (!live) {
      live = document.createElement("div");
      live.id = LIVE_ID;
      live.setAttribute("role", "status");
      live.setAttribute("aria-live", "polite");
      live.style.cssText = "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);";
      document.body.appendChild(live);
    }
    return live;
  }
  function announce(previous, remaining) {
    for (const mark of MARKS) {
      if (previous > mark && remaining <= mark) {
        const minutes = mark / 60;
        liveRegion().textContent = minutes + (minutes === 1 ? " minute" : " minutes") + " left";
      }
    }
    if (previous > 0 && remaining <= 0) {
      liveRegion().textContent = "Time is up. Carry on: the overtime is recorded.";
    }
  }
  function tick() {
    // The sidebar's clock and the page's compact one (shown below the sidebar's breakpoint) carry the
    // same numbers: both are drawn, one announcement is made.
    const clocks = document.querySelectorAll("[data-fl-clock]");
    if (!clocks.length) return;
    const d = clocks[0].dataset;
    if (d.finished === "1") return;
    if (d.offsetMs === undefined) d.offsetMs = String(Number(d.serverNowMs) - Date.now());
    const now = (Date.now() + Number(d.offsetMs)) / 1000;
    const limit = Number(d.limit);
    const elapsed = Math.max(0, now - Number(d.started));
    const remaining = limit - elapsed;
    const state = window.__flClockState;
    if (state.key === d.started + "/" + d.limit && state.previous !== null) announce(state.previous, remaining);
    state.key = d.started + "/" + d.limit;
    state.previous = remaining;
    const over = remaining < 0;
    const share = limit > 0 ? Math.min(1, elapsed / limit) : 1;
    for (const el of clocks) {
      if (el.dataset.started !== d.started || el.dataset.limit !== d.limit) continue;
      el.querySelector(".fl-left").hidden = over;
      el.querySelector(".fl-over").hidden = !over;
      el.querySelector(".fl-value").textContent = fmt(remaining);
      el.querySelector(".fl-overtime").textContent = fmt(-remaining);
      const bar = el.querySelector(".fl-bar");
      bar.setAttribute("aria-valuenow", String(Math.round(share * 100)));
      el.querySelector(".fl-fill").style.width = (share * 100).toFixed(2) + "%%";
      el.querySelector(".fl-elapsed").textContent = fmt(elapsed);
    }
  }
  liveRegion();
  if (!window.__flClockState) {
    window.__flClockState = {key: null, previous: null};
    setInterval(tick, 1000);
  }
  tick();
})();
</script>
"""


_TICKING = _SCRIPT % {"marks": json.dumps(list(ANNOUNCE_AT_S)), "live_id": json.dumps(LIVE_REGION_ID)}
# The style and the script as st.html would clean them around the one-line markup: a clock comes out clean, and
# its page passes it as CleanHtml, so its 5.6 KB are not dedented again on every run.
_CLEAN_STYLE, _CLEAN_TICKING = clean_around(_STYLE, _TICKING)


@dataclass(frozen=True)
class ClockView:
    """What the browser needs to count down: no names or other user text, only numbers."""

    started_at: float
    limit_s: float
    extra_s: float
    now: float
    clock: Clock


def clock_markup(view: ClockView, *, compact: bool = False, with_script: bool = True) -> str:
    """HTML (style, markup and ticking script) for the countdown as it stands at `view.now`.

    The markup is right before the script runs, so the first paint, AppTest and a browser
    without JavaScript all show the server's figures. `compact` is the page's own one-line clock,
    shown only below the sidebar's breakpoint (where the sidebar starts collapsed) and kept in view
    while the page scrolls; both clocks tick from the same script and announce once. `with_script` False leaves
    the style and the script out (about 5.5 KB): for a clock drawn beside another that carries them.
    """
    clock = view.clock
    over = clock.over
    share = min(1.0, clock.elapsed_s / clock.limit_s) if clock.limit_s else 1.0
    extra = f" (incl. {format_duration(view.extra_s)} extra)" if view.extra_s else ""
    hidden_left = " hidden" if over else ""
    hidden_over = "" if over else " hidden"
    left, overtime = format_duration(clock.remaining_s), format_duration(clock.overtime_s)
    kind = ' data-fl-compact="1"' if compact else ""
    if compact:
        label = "left when you finished" if clock.finished else "left"
        time_left = (f'<div class="fl-left" data-testid="fl-page-time-left"{hidden_left}>{STOPWATCH_SVG} '
                     f'<strong class="fl-value">{left}</strong> <span class="fl-label">{label}</span></div>')
        over_time = (f'<div class="fl-over" data-testid="fl-page-over-time"{hidden_over}>{STOPWATCH_SVG} Over by '
                     f'<strong class="fl-overtime">{overtime}</strong></div>')
        extra = " +extra" if view.extra_s else ""
    else:
        label = "Time left when you finished" if clock.finished else "Time left"
        time_left = (f'<div class="fl-left" data-testid="fl-time-left"{hidden_left}>'
                     f'<div class="fl-label">{label}</div><div class="fl-value">{left}</div></div>')
        over_time = (f'<div class="fl-over" data-testid="fl-over-time"{hidden_over}>Over time by '
                     f'<strong class="fl-overtime">{overtime}</strong> — carry on, it is recorded.</div>')
    markup = (
        f'<div class="fl-clock{" fl-compact" if compact else ""}" data-fl-clock="1"{kind} '
        f'data-started="{view.started_at:.3f}" '
        f'data-limit="{view.limit_s:.3f}" data-server-now-ms="{view.now * 1000:.0f}" '
        f'data-finished="{1 if clock.finished else 0}">'
        + time_left + over_time +
        f'<div class="fl-bar" role="progressbar" aria-label="Time used" aria-valuemin="0" aria-valuemax="100" '
        f'aria-valuenow="{round(share * 100)}"><div class="fl-fill" style="width: {share * 100:.2f}%"></div></div>'
        f'<div class="fl-spent"><span class="fl-elapsed">{format_duration(clock.elapsed_s)}</span> of '
        f'{format_duration(clock.limit_s)}{extra}</div>'
        '</div>'
    )
    if not with_script:
        return markup
    return _CLEAN_STYLE + markup + _CLEAN_TICKING


def next_server_run_s(clock: Clock, *, floor_s: float = 30.0, idle_s: float = 3600.0) -> float:
    """Seconds until the clock fragment should run on the server again without the candidate acting.

    Once, just after the limit passes; the browser draws every second in between. Streamlit
    repeats a fragment's interval until the next full run, so a short interval (set seconds
    before the limit) is floored; after the limit, or once finished, a long one replaces it.
    """
    if clock.finished or clock.over:
        return idle_s
    return max(floor_s, clock.remaining_s + 1.0)


def rendered_time_left(body: str) -> str | None:
    """The time-left figure in a clock's markup as the server drew it (None for other HTML): for tests."""
    if "data-fl-clock" not in body:
        return None
    found = re.search(r'class="fl-value">([^<]*)<', body)
    return found.group(1) if found else None
