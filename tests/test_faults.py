"""A store that cannot open gives one plain page naming the file or URL; the simulations still run.

Each fault is real: a corrupt file, a directory nothing may write in, a file another process holds
open with duckdb.connect, and a PostgreSQL URL where no server listens.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ui.faults import diagnose, redact_url

ROOT = Path(__file__).resolve().parent.parent
FAULT_TITLE = "Attempts cannot be saved right now"
HOLD_FILE = """
import sys, time, duckdb
connection = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()   # until the test closes our stdin
"""


@pytest.fixture
def held_file(tmp_path):
    """A DuckDB file held open for writing by another process, as a running app server would."""
    path = tmp_path / "held.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_FILE, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    yield path, holder.pid
    holder.stdin.close()
    holder.wait(timeout=20)


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory the app may not create files in (root ignores file modes, so it gets sysfs)."""
    if os.geteuid() == 0:
        return Path("/sys")
    locked = tmp_path / "read-only"
    locked.mkdir()
    locked.chmod(0o555)
    return locked


def _code_blocks(at) -> list[str]:
    return [block.value for block in at.code]


def _assert_fault_page(at, where: str, words: str) -> None:
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [FAULT_TITLE]
    assert where in _code_blocks(at), _code_blocks(at)
    assert words in at.error[0].value, at.error[0].value


def _open_app(app_test, monkeypatch, target: str):
    monkeypatch.setenv("FAULTLINES_DB", target)
    at = app_test("app.py")
    at.run()
    return at


def test_a_corrupt_file_names_the_file_and_the_sims_still_run(app_test, monkeypatch, tmp_path):
    corrupt = tmp_path / "corrupt.duckdb"
    corrupt.write_bytes(b"this is not a database\n" * 1000)
    at = _open_app(app_test, monkeypatch, str(corrupt))
    _assert_fault_page(at, str(corrupt), "not a readable DuckDB database")
    assert any("Move the file aside" in m.value for m in at.markdown)
    at.switch_page("pages/sim_hot_shard.py").run()
    assert not at.exception, at.exception
    assert FAULT_TITLE not in [t.value for t in at.title]
    assert any("Hot shard" in t.value for t in at.title)


def test_a_directory_nothing_may_write_in(app_test, monkeypatch, unwritable_dir):
    target = str(unwritable_dir / "faultlines.duckdb")
    at = _open_app(app_test, monkeypatch, target)
    _assert_fault_page(at, target, "may not write")


def test_a_file_locked_by_another_process_names_that_process(app_test, monkeypatch, held_file):
    path, pid = held_file
    at = _open_app(app_test, monkeypatch, str(path))
    _assert_fault_page(at, str(path), f"process {pid}")
    at.switch_page("pages/drill.py").run()   # every page that needs the store says the same
    _assert_fault_page(at, str(path), f"process {pid}")


def test_an_unreachable_postgresql_url_is_named_without_its_password(app_test, monkeypatch):
    url = "postgresql://fl:secret@127.0.0.1:1/x"
    at = _open_app(app_test, monkeypatch, url)
    _assert_fault_page(at, "postgresql://fl:***@127.0.0.1:1/x", "cannot be reached")
    assert not any("secret" in text for text in _code_blocks(at) + [m.value for m in at.markdown])


def test_the_demo_against_a_held_file_says_so_in_one_line(held_file):
    path, pid = held_file
    run = subprocess.run([sys.executable, "-m", "drills.demo", "--candidates", "1"], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "FAULTLINES_DB": str(path)}, timeout=120)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert str(path) in lines[0] and f"process {pid}" in lines[0] and "Traceback" not in run.stderr


@pytest.mark.parametrize("url, shown", [
    ("postgresql://u:pw@db.example:5432/fl", "postgresql://u:***@db.example:5432/fl"),
    ("postgresql://u@db/fl?password=pw&sslmode=require", "postgresql://u@db/fl?password=***&sslmode=require"),
    ("postgresql://postgres:@/postgres?host=/tmp/x", "postgresql://postgres:***@/postgres?host=/tmp/x"),
])
def test_urls_are_shown_without_passwords(url, shown):
    assert redact_url(url) == shown


def test_an_unknown_error_still_names_the_file():
    fault = diagnose("/srv/fl.duckdb", RuntimeError("disk on fire\nsecond line"))
    assert (fault.kind, fault.where, fault.detail) == ("other", "/srv/fl.duckdb", "disk on fire")


def test_a_postgresql_server_that_answers_but_refuses_is_not_called_unreachable():
    fault = diagnose("postgresql://fl:pw@db/fl", RuntimeError('FATAL:  database "fl" does not exist'))
    assert fault.kind == "other" and "answered" in fault.headline and fault.where == "postgresql://fl:***@db/fl"


# -- a store that fails after start-up ------------------------------------------------------------------
LOCK = "Lock in"


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "error", "warning", "title")
                     for e in getattr(at, kind))


def test_a_duckdb_file_that_refuses_commits_after_start_up_is_a_plain_page_that_recovers(app_test, db_path):
    """The WAL's path taken by a directory: DuckDB cannot commit (as on a disk gone read-only), reads still work."""
    from ui.context import _fault_for, get_store
    from ui.faults import OUTAGE_TITLE

    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    at.selectbox(key="part_select").set_value("board").run()
    get_store().query("CHECKPOINT")   # the WAL file goes, so the next commit must create it
    wal = Path(f"{db_path}.wal")
    wal.mkdir()
    at.text_input(key="lock::job_duration::value").input("32")
    next(b for b in at.button if b.label == LOCK).click().run()

    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [OUTAGE_TITLE]
    assert "locked in before is safe" in at.warning[0].value and "no need to reload" in at.warning[0].value
    assert "was not confirmed" in at.error[0].value
    _fault_for.clear()   # as after its 5 s: the store is asked to open afresh, and the file refuses that too
    at.run()   # the page's own check: the file still refuses commits
    assert [t.value for t in at.title] == [OUTAGE_TITLE] and not at.exception

    wal.rmdir()
    at.run()   # the next check finds the store writable again: the drill is back, with the answer typed
    assert OUTAGE_TITLE not in [t.value for t in at.title] and not at.exception
    assert at.text_input(key="lock::job_duration::value").value == "32"
    assert any("Not locked in" in e.value for e in at.error)
    next(b for b in at.button if b.label == LOCK).click().run()
    assert "Your guess: **32 s**" in _texts(at)
    store = get_store()
    assert [a.value for a in store.answers(store.attempt_by_token(at.query_params["attempt"]).id).values()] == [32.0]


def test_postgresql_store_calls_give_up_in_seconds(pg_url):
    """Connecting, waiting for a pooled connection and each statement are bounded by a few seconds, never 40."""
    from drills.backends import open_store

    store = open_store(pg_url)
    try:
        assert store._pool.timeout <= 5
        assert store._pool.reconnect_timeout <= 5
        with store._pool.connection() as conn:
            assert conn.info.get_parameters()["connect_timeout"] in {"1", "2", "3", "4", "5"}
            assert conn.execute("SHOW statement_timeout").fetchone()[0] in {"1s", "2s", "3s", "4s", "5s"}
    finally:
        store.close()


def test_only_faults_of_the_store_itself_become_the_outage_page():
    import duckdb
    import psycopg
    import psycopg_pool

    from ui.faults import is_store_fault

    assert is_store_fault(psycopg_pool.PoolTimeout("couldn't get a connection after 4.00 sec"))
    assert is_store_fault(psycopg.OperationalError("connection failed"))
    assert is_store_fault(duckdb.IOException("Could not write file"))
    assert is_store_fault(duckdb.TransactionException('Failed to commit: Cannot open file "x.wal": Is a directory'))
    assert not is_store_fault(duckdb.TransactionException("Conflict on tuple deletion"))
    assert not is_store_fault(duckdb.BinderException("Referenced column not found"))
    assert not is_store_fault(psycopg.errors.UndefinedTable("relation does not exist"))
    assert not is_store_fault(ValueError("bad input"))


def test_a_store_that_could_not_open_is_picked_up_without_a_restart(app_test, monkeypatch, tmp_path):
    """The start-up fault page checks by itself: once the other process lets go, the catalogue comes back."""
    from ui.context import _fault_for

    path = tmp_path / "held.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_FILE, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    at = _open_app(app_test, monkeypatch, str(path))
    _assert_fault_page(at, str(path), f"process {holder.pid}")
    assert any("retries on its own" in c.value for c in at.caption)
    holder.stdin.close()
    holder.wait(timeout=20)
    _fault_for.clear()   # as the remembered verdict expires (5 s) before the page's next check
    at.run()
    assert not at.exception, at.exception
    assert FAULT_TITLE not in [t.value for t in at.title]


# -- a PostgreSQL server that hangs (SIGSTOP): alive, connected, and answering nothing ------------------
@pytest.fixture
def hung_pg():
    """A PostgreSQL of this test's own on TCP (the session's shared server must not be stopped), with
    `freeze()` (SIGSTOP to the postmaster and every backend) and `thaw()` (SIGCONT)."""
    from bench.bench_faults import freeze, thaw
    from deploy.stack import EmbeddedPostgres, create_database, free_port

    import shutil
    import tempfile

    # Not tmp_path: as root the server runs as the wheel's own user, who may not enter pytest's 0700 directories.
    where = Path(tempfile.mkdtemp(prefix="faultlines-hung-pg-"))
    server = EmbeddedPostgres(where / "pg", free_port())
    log = (where / "pg.log").open("ab")
    proc = subprocess.Popen(server.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            user=server.user if os.geteuid() == 0 else None)
    frozen: list = []
    handle = type("HungPg", (), {})()
    handle.url = create_database(server.url, "hung")
    handle.freeze = lambda: frozen.extend(freeze(proc.pid))
    handle.thaw = lambda: (thaw(frozen), frozen.clear())
    try:
        yield handle
    finally:
        thaw(frozen)
        proc.send_signal(2)   # SIGINT: PostgreSQL's fast shutdown
        proc.wait(timeout=30)
        log.close()
        shutil.rmtree(where, ignore_errors=True)


def _until(check, tries: int = 60, pause_s: float = 0.5):
    """Poll `check()` up to `tries` times; returns its first true value (the test fails if none comes)."""
    import time

    for _ in range(tries):
        found = check()
        if found:
            return found
        time.sleep(pause_s)
    raise AssertionError(f"{check} never came true in {tries} tries")


def test_a_store_call_to_a_stopped_postgresql_is_cut_by_the_client_and_the_store_comes_back(hung_pg):
    """The server's statement_timeout cannot fire on a server that is stopped; the client's deadline does.
    The call fails as a store fault, not a hang; nothing it tried is stored; after SIGCONT the same store
    (no restart) takes the press again."""
    from concurrent.futures import ThreadPoolExecutor

    from drills.backends import open_store
    from drills.store.pg_pool import DEADLINES
    from ui.faults import is_store_fault

    store = open_store(hung_pg.url)
    try:
        attempt = store.start_attempt("one_tenant", "zed", "", 45 * 60)
        cuts = DEADLINES.cuts
        hung_pg.freeze()
        with ThreadPoolExecutor(1) as pool:
            # The bound here only keeps a broken build from hanging the suite; the store's own deadline ends it.
            failed = pool.submit(_lock, store, attempt.id, 32.0).exception(timeout=120)
        assert failed is not None and is_store_fault(failed), failed
        assert DEADLINES.cuts > cuts, "the client cut the call (the server never answered)"
        hung_pg.thaw()
        _until(lambda: _answers_now(store, attempt.id) is not None)
        assert _answers_now(store, attempt.id) == {}, "the press that was cut was not stored"
        _lock(store, attempt.id, 33.0)
        assert [a.value for a in store.answers(attempt.id).values()] == [33.0]
    finally:
        hung_pg.thaw()
        store.close()


def _lock(store, attempt_id: int, value: float):
    return store.lock_answer(attempt_id, "job_duration", "board", "numeric", value=value)


def _answers_now(store, attempt_id: int):
    """The attempt's answers, or None while the store does not answer."""
    from ui.faults import is_store_fault

    try:
        return store.answers(attempt_id)
    except Exception as error:   # noqa: BLE001 (only the store's own faults mean "not yet")
        if not is_store_fault(error):
            raise
        return None


def test_every_postgresql_connection_carries_keepalives_and_a_user_timeout(pg_url):
    from drills.backends import open_store

    store = open_store(pg_url)
    try:
        with store._pool.connection() as conn:
            given = conn.info.get_parameters()
        assert given["keepalives"] == "1" and given["tcp_user_timeout"] == "5000"
        # a silent peer is found within 5 s idle + 2 probes 2 s apart
        assert (given["keepalives_idle"], given["keepalives_interval"], given["keepalives_count"]) == ("5", "2", "2")
    finally:
        store.close()


def test_a_reveal_while_postgresql_is_stopped_is_the_outage_page_and_records_nothing(app_test, monkeypatch, hung_pg):
    """A Reveal press during the hang (recorded in the button's callback) comes back as the outage page saying it
    was not recorded; once PostgreSQL answers, the section is still closed, and one more press opens it."""
    from ui.context import get_store
    from ui.drill.reveal import reveal_button, skip_button
    from ui.faults import OUTAGE_TITLE

    monkeypatch.setenv("FAULTLINES_DB", hung_pg.url)
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    at.selectbox(key="part_select").set_value("board").run()
    at.button(key=skip_button("board")).click().run()   # the board's questions skipped: its reveal opens
    press = reveal_button("board", "worked")
    assert not at.button(key=press).disabled
    hung_pg.freeze()
    at.button(key=press).click().run(timeout=120)
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [OUTAGE_TITLE]
    assert "Reveal was not recorded" in at.error[0].value
    hung_pg.thaw()

    def back():
        at.run(timeout=60)   # the outage page's own check, as its fragment runs it
        return OUTAGE_TITLE not in [t.value for t in at.title]

    _until(back, tries=20, pause_s=1.0)
    store = get_store()
    attempt = store.attempt_by_token(at.query_params["attempt"])
    assert store.reveals(attempt.id) == {}, "the refused press recorded nothing"
    at.button(key=press).click().run(timeout=60)
    assert not at.exception, at.exception
    assert list(store.reveals(attempt.id)) == [("board", "worked")]
    assert not [b for b in at.button if b.label.startswith("Reveal:")], "one press opened the board's one section"


def test_a_lock_in_while_postgresql_is_stopped_is_the_outage_page_and_not_locked_in(app_test, monkeypatch, hung_pg):
    """A press during the hang comes back as the outage page saying it was not locked in; after SIGCONT the
    page comes back by itself with the typed value, and the next press is stored."""
    from ui.context import get_store
    from ui.faults import OUTAGE_TITLE

    monkeypatch.setenv("FAULTLINES_DB", hung_pg.url)
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    at.selectbox(key="part_select").set_value("board").run()
    at.text_input(key="lock::job_duration::value").input("32")
    asks = []   # each check of the store: on a hung server each one takes the store's whole deadline
    check_writes = type(get_store()).check_writes
    monkeypatch.setattr(type(get_store()), "check_writes", lambda self: (asks.append(1), check_writes(self))[1])
    hung_pg.freeze()
    next(b for b in at.button if b.label == LOCK).click().run(timeout=120)
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [OUTAGE_TITLE]
    assert "was not confirmed" in at.error[0].value
    assert asks == [], "the page drawn on the refused press asked the store nothing more: one deadline, not two"
    hung_pg.thaw()

    def back():
        at.run(timeout=60)   # the outage page's own check, as its fragment runs it
        return OUTAGE_TITLE not in [t.value for t in at.title]

    _until(back, tries=20, pause_s=1.0)
    assert not at.exception, at.exception
    assert at.text_input(key="lock::job_duration::value").value == "32"
    next(b for b in at.button if b.label == LOCK).click().run(timeout=60)
    assert "Your guess: **32 s**" in _texts(at)
    store = get_store()
    attempt = store.attempt_by_token(at.query_params["attempt"])
    assert [a.value for a in store.answers(attempt.id).values()] == [32.0]
    from drills.reports.timeline import grant_history

    (given_back,) = grant_history(store, attempt.id)   # the outage's time, given back when the store answered
    assert given_back.granted_by == "system" and given_back.minutes > 0 and "could not be reached" in given_back.reason
    assert attempt.extra_s == given_back.minutes * 60
