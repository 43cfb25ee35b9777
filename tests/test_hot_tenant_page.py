"""AppTest flows for the hot-tenant page: the lab steps in order, owners racing, guess-then-play.

Each AppTest run is its own session, so each gets its own in-memory lab database.
"""
from __future__ import annotations

import json

import pytest

from ui.labs import hot_tenant_charts as charts
from labs.hot_tenant.playground import Playground
from sims.partitions import Params, run

PAGE = "pages/hot_tenant.py"


@pytest.fixture
def page(app_test):
    at = app_test(PAGE)
    at.run()
    assert not at.exception
    return at


def click(at, label: str, nth: int = 0):
    buttons = [b for b in at.button if b.label == label]
    buttons[nth].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_page_opens_with_both_tabs(page):
    assert [t.label for t in page.tabs] == ["Event-store lab", "Partition simulation"]
    assert metric(page, "Routing version · buckets") == "v1 · 4"


def test_burst_change_and_retries_never_double_an_event(page):
    click(page, "Write burst")
    page.number_input(key="ht_buckets").set_value(8).run()
    click(page, "Publish routing version 2")
    assert metric(page, "Routing version · buckets") == "v2 · 8"
    click(page, "Retry")  # 20 oldest, original route
    page.radio(key="ht_retry_route").set_value("current").run()
    click(page, "Retry")
    assert metric(page, "Events the client sent") == "40"
    assert metric(page, "Events stored") == "40"
    assert "20 recognised, 0 stored for the first time" in page.success[0].value


def test_reading_pages_reports_candidates_and_ends(page):
    page.number_input(key="ht_burst").set_value(30).run()
    click(page, "Write burst")
    click(page, "Read the newest page")
    assert metric(page, "Returned") == "10"
    assert int(metric(page, "Candidates read (naive)")) == 30  # 10 from each of 4 buckets holding ~7.5
    assert int(metric(page, "Candidates read (bounded)")) < 30
    for _ in range(3):  # 30 events, 10 a page; a fourth page may come back empty
        if [b for b in page.button if b.label == "Next page"][0].disabled:
            break
        click(page, "Next page")
    assert [b for b in page.button if b.label == "Next page"][0].disabled
    assert any("last page" in c.value for c in page.caption)


def test_stale_owner_bounces(page):
    click(page, "Acquire", 0)
    click(page, "Append", 0)
    click(page, "Acquire", 1)
    assert "holds the lease" in page.error[0].value
    click(page, "Take over", 1)
    click(page, "Append", 0)
    assert "append refused" in page.error[0].value
    click(page, "Race the two owners in threads")
    assert any("has no gaps" in m.value for m in page.markdown)


def _charts(at) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


def _sim_charts_with_data(at) -> list[dict]:
    specs = [json.loads(spec) for spec in _charts(at)]
    return [s for s in specs if s.get("data") and "Stored events" not in json.dumps(s["layout"])]


def test_guess_then_play_shows_the_brief_figures(page):
    assert [b for b in page.button if b.label == "▶ Play"][0].disabled
    # before Play nothing on the sim tab gives the answer away: no load chart, no backlog
    assert not any("Offered load by partition" in spec or "Backlog over time" in spec for spec in _charts(page))
    assert not _sim_charts_with_data(page)
    assert any("4 partitions serve 100 units/s each" in c.value for c in page.caption)
    guess_box = next(n for n in page.number_input if "unserved work" in n.label)
    assert guess_box.value is None                       # nothing typed for the reader: no anchor
    click(page, "Lock in my guess")
    assert any("Type your guess first" in e.value for e in page.error)
    next(n for n in page.number_input if "unserved work" in n.label).set_value(100)
    click(page, "Lock in my guess")
    locked = [i.value for i in page.info if "Your locked guess" in i.value]
    assert locked and "How much unserved work does the fleet add every second?" in locked[0]
    assert not any("Offered load by partition" in spec for spec in _charts(page))
    click(page, "▶ Play")
    assert any("Offered load by partition" in spec for spec in _charts(page))
    assert metric(page, "Backlog growth") == "150.0/s"
    assert metric(page, "Fleet utilisation") == "62.5%"
    assert metric(page, "Replay drained after") == "never"
    buckets = next(s for s in page.slider if s.label.startswith("Buckets"))
    buckets.set_value(4).run()
    # a guess locked for one bucket is not graded against four: the verdict and charts go away
    assert not [m for m in page.metric if m.label in ("Off by", "Backlog growth")]
    assert not any("Offered load by partition" in spec for spec in _charts(page))
    assert [b for b in page.button if b.label == "▶ Play"][0].disabled
    assert any("settings changed" in i.value for i in page.info)
    assert any("spread over 4 buckets" in c.value for c in page.caption)
    next(n for n in page.number_input if "unserved work" in n.label).set_value(0)
    click(page, "Lock in my guess")
    click(page, "▶ Play")
    assert metric(page, "Backlog growth") == "0.0/s"
    assert metric(page, "Busiest bucket") == "62.5/s"
    assert metric(page, "Replay drained after") == "60.0 s"


def test_figures_carry_the_data():
    play = Playground()
    play.write_burst(12)
    play.change_buckets(8)
    fig = charts.bucket_figure(play.bucket_counts(), {1: 4, 2: 8})
    assert sum(sum(trace.y) for trace in fig.data) == 12 and len(fig.data) == 2
    result = run(Params(buckets=1, horizon_s=10.0), 1)
    load = charts.partition_load_figure(result)
    assert list(load.data[0].y) == pytest.approx([250.0, 0.0, 0.0, 0.0])
    frames = list(charts.backlog_frames(result, frames=4))
    assert len(frames) == 4 and frames[-1].data[0].y[-1] == pytest.approx(1_500.0)
    play.acquire("A", takeover=False)
    play.append("A", 3)
    play.acquire("B", takeover=True)
    play.append("A", 2)
    stream = charts.stream_figure(play.stream_events(), play.owner_log)
    assert [t.name for t in stream.data] == ["owner A", "refused append"]
    assert list(stream.data[1].x) == [4]  # A was refused when the head stood at 3
    play.close()
