"""Chromium + axe-core: no serious or critical accessibility violation on any page, on a desktop and a phone.

axe-core comes from node_modules (pinned in package.json, installed by `npm ci`), never a CDN. One server
and one browser tab serve every page; each page opens once and is checked at both widths (a resize between).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from drills import access
from drills.demo import populate
from drills.loader import load_catalogue
from drills.schema import NumericQuestion
from drills.store import AttemptStore
from tests.browser import sign_in_instructor, ROOT, AppServer, resume_code_on, start_drill, wait_for_app

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"
BLOCKING = ("serious", "critical")
ALSO_BLOCKING = ("heading-order",)   # moderate in axe, but a skipped level hides the page's outline
FOCUS_TABS = 40                      # focus stops checked for a visible ring on the pages in RING_PAGES
RING_PAGES = ("/", "/sim_hot_shard", "drill: break1", "drill: score", "instructor board")
WIDTHS = (1300, 390)
VIEWPORTS = {1300: {"width": 1300, "height": 900}, 390: {"width": 390, "height": 844}}
SHOTS = os.environ.get("FAULTLINES_A11Y_SHOTS")   # a folder: a full-page screenshot of every page checked
PASSPHRASE = "correct horse battery staple"
ONE_TENANT = load_catalogue().drills["one_tenant"]

# Plain pages, opened by URL path. Pages that need an attempt or a sign-in are added by the test.
PLAIN = ("", "drill", "results", "history", "review", "sim_hot_shard", "sim_concurrency_pool",
         "sim_retry_storm", "sim_platform", "hot_tenant", "pg_lab", "instructor")


def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` at the repository root (package.json pins axe-core)")
    version = json.loads((AXE.parent / "package.json").read_text())["version"]
    assert version == AXE_VERSION, f"node_modules has axe-core {version}, package.json pins {AXE_VERSION}"
    return AXE.read_text(encoding="utf-8")


def blocking_violations(page, source: str) -> list[dict]:
    """Run axe on the page as it stands; the serious and critical violations, one entry per rule."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=source)
    results = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        {"rule": v["id"], "impact": v["impact"], "help": v["help"],
         "nodes": [(n["target"], n.get("failureSummary", "").replace("\n", " ")[:300]) for n in v["nodes"]]}
        for v in results["violations"] if v["impact"] in BLOCKING or v["id"] in ALSO_BLOCKING
    ]


# The focused element's ring: an outline of at least 2px on it or a close ancestor (fields draw theirs on
# the box around the input), with 3:1 against the background it sits on.
_RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const box = el.getBoundingClientRect();
  const what = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' +
               (el.getAttribute('aria-label') || el.innerText || '').trim().slice(0, 40) + '"';
  // A canvas grid focuses a cell of its hidden table: the ring must then be on a drawn ancestor.
  const hidden = box.width === 0 && box.height === 0;
  const rgba = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return m.length === 3 ? [...m, 1] : m; };
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 :
                                                    Math.pow((v + 0.055) / 1.055, 2.4); })
                                      .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const behind = (node) => { for (; node; node = node.parentElement) { const c = rgba(getComputedStyle(node).backgroundColor);
                             if (c[3] > 0.5) return c; } return [255, 255, 255, 1]; };
  let node = el;
  for (let depth = 0; depth < (hidden ? 20 : 5) && node && node !== document.body; depth++, node = node.parentElement) {
    const cs = getComputedStyle(node);
    if (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2) {
      const r = ratio(rgba(cs.outlineColor), behind(node.parentElement));
      return {ok: r >= 3, what, why: 'ring ' + cs.outlineColor + ' at ' + r.toFixed(2) + ':1'};
    }
  }
  return {ok: false, what, why: hidden ? 'focus on something not drawn, no ring around it' : 'no outline'};
}"""


def faint_focus(page, tabs: int = FOCUS_TABS) -> list[str]:
    """Tab through the page from its top; every focus stop without a 3:1 ring of 2px or more."""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    page.locator("body").focus()
    missing, seen = [], set()
    for _ in range(tabs):
        page.keyboard.press("Tab")
        ring = page.evaluate(_RING)
        if ring is None or ring["what"] in seen:
            continue
        seen.add(ring["what"])
        if not ring["ok"]:
            missing.append(f"{ring['what']}: {ring['why']}")
    return missing


# Resolves once nothing on the page has changed for `quiet` ms (or after `cap` ms, when a clock keeps ticking).
_QUIET = """([quiet, cap]) => new Promise((done) => {
  let timer;
  const finish = () => { observer.disconnect(); clearTimeout(limit); done(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(finish, quiet); });
  observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(finish, quiet);
  const limit = setTimeout(finish, cap);
})"""


def settle(page, *, resized: bool = False) -> None:
    if not resized:   # a resize applies CSS media queries and runs no script: there is no run to wait for
        wait_for_app(page)
    # A widget's code loads on first use (a skeleton till then); charts draw after the run ends: the page is
    # checked once its drawing has stopped, rather than after a fixed pause.
    page.wait_for_function("() => !document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]')")
    page.evaluate(_QUIET, [250, 5000])


@pytest.fixture(scope="module")
def a11y_server(tmp_path_factory):
    """One server for every page and width: a small demo class for the board, the passphrase for its gate."""
    db_path = tmp_path_factory.mktemp("a11y") / "a11y.duckdb"
    store = AttemptStore(db_path)
    truths = {q.id: 100.0 for q in ONE_TENANT.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
    populate(store, ONE_TENANT, candidates=3, cohorts=("north",), seed=3, sim_truths=truths)
    store.close()
    server = AppServer(db_path, env={access.HASH_ENV: access.hash_passphrase(PASSPHRASE, iterations=1_000)})
    server.start()
    yield server
    server.stop()


def sweep(page, url: str, source: str) -> dict[str, list[dict]]:
    """Every page of the app as a visitor reaches it, checked at both widths; {"page label [width]": blocking
    violations}. Each page opens once: the walk goes on at whichever width its last check left."""
    found: dict[str, list[dict]] = {}

    def check(label: str) -> None:
        # At the width the page opened at, then at the other: the layout's only width switches are CSS media
        # queries (ui/a11y.py, ui/drill/browser_clock.py), which a resize applies as an opening at that width would.
        now = page.viewport_size["width"]
        for width in (now, *(w for w in WIDTHS if w != now)):
            resized = width != page.viewport_size["width"]
            if resized:
                page.set_viewport_size(VIEWPORTS[width])
            settle(page, resized=resized)
            key = f"{label} [{width}px]"
            found[key] = blocking_violations(page, source)
            if label in RING_PAGES:
                found[key] += [{"rule": "focus-ring", "impact": "serious", "help": "a visible 3:1 focus ring",
                                "nodes": [([stop], "") for stop in faint]} for faint in [faint_focus(page)] if faint]
            if SHOTS:
                page.screenshot(path=str(Path(SHOTS) / (re.sub(r"\W+", "_", label) + f"_{width}.png")), full_page=True)

    for path in PLAIN:
        page.goto(f"{url}/{path}")
        page.locator("h1").first.wait_for(timeout=120_000)   # a cold server imports every page first
        check(f"/{path}")

    handle = "axe-ada"
    token = start_drill(page, url, "One Tenant Takes Everyone Down", handle=handle)
    code = resume_code_on(page)
    check("drill: first part")
    for part in ("board", "break1", "score"):
        page.goto(f"{url}/drill?attempt={token}&part={part}")
        check(f"drill: {part}")
    page.goto(f"{url}/results?attempt={token}")
    check("results (open attempt)")
    # My history with an attempt in it: its table (wider than a phone) and its section headings.
    page.goto(f"{url}/history")
    page.get_by_role("textbox", name="Your handle").fill(handle)
    page.get_by_role("textbox", name="Resume code").fill(code)
    page.get_by_role("button", name="Open my history").click()
    page.get_by_test_id("stTable").wait_for()
    check("history (with an attempt)")

    sign_in_instructor(page, url, PASSPHRASE)
    check("instructor board")
    return found


def test_no_serious_or_critical_axe_violation_on_any_page_at_either_width(a11y_server, chromium):
    source = axe_source()
    context = chromium.new_context(viewport=VIEWPORTS[WIDTHS[0]])
    page = context.new_page()
    page.set_default_timeout(30000)
    try:
        found = sweep(page, a11y_server.url, source)
    finally:
        context.close()
    assert len(found) == len(WIDTHS) * (len(PLAIN) + 7), "every page was checked at both widths"
    failing = {label: v for label, v in found.items() if v}
    report = []
    for label, violations in failing.items():
        for v in violations:
            report.append(f"{label} {v['impact']} {v['rule']}: {v['help']} ({len(v['nodes'])} nodes)")
            report.extend(f"    {' '.join(target)[-120:]} | {summary[:220]}" for target, summary in v["nodes"][:3])
    print("\n".join(report) or f"axe {AXE_VERSION}: {len(found)} page checks at {WIDTHS} px, 0 serious or critical")
    assert not failing, "\n" + "\n".join(report)
