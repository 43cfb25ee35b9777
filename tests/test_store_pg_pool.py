"""The PostgreSQL store's connection pool: a connection the server dropped is never handed out, and a hot
pool costs no check round trip per read (the check was 4-9% of the app server's CPU under load).

On the embedded server; connections are dropped with pg_terminate_backend from another connection.
"""
from __future__ import annotations

import threading

import psycopg
import pytest

import drills.store.pg_pool
from drills.backends import open_store
from tests.clock import FakeClock


@pytest.fixture
def store(pg_url):
    store = open_store(pg_url, clock=FakeClock())
    yield store
    store.close()


def _statements(monkeypatch) -> list[str]:
    """Every statement psycopg sends from now on (Connection.execute and the pool's check go through here)."""
    sent: list[str] = []
    original = psycopg.Cursor.execute

    def counting(self, query, *args, **kwargs):
        sent.append(str(query))
        return original(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", counting)
    return sent


def _grow_pool(store, token: str, connections: int = 3) -> None:
    """Hold `connections` pooled connections at once, so the pool keeps that many idle afterwards."""
    barrier = threading.Barrier(connections)

    def hold():
        with store._reading() as cur:
            cur.execute("SELECT 1")
            barrier.wait(timeout=10)

    threads = [threading.Thread(target=hold) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.attempt_by_token(token) is not None


def _terminate_backends(pg_url: str) -> int:
    """Drop every other connection to this database, as a restart would; waits until they are gone."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        return conn.execute("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]


def test_reads_writes_and_reports_go_on_after_the_server_drops_the_pools_connections(store, pg_url):
    attempt = store.start_attempt("one_tenant", "ada", "c1", 45 * 60, seed=7)
    _grow_pool(store, attempt.token)

    assert _terminate_backends(pg_url) >= 3
    assert store.attempt_by_token(attempt.token) == attempt

    assert _terminate_backends(pg_url) >= 1
    locked, created = store.lock_answer(attempt.id, "q1", "p1", "numeric", value=42.0)
    assert created and locked.value == 42.0

    assert _terminate_backends(pg_url) >= 1
    assert store.query("SELECT question_id, value FROM answers").fetchall() == [("q1", 42.0)]
    assert [e.kind for e in store.events(attempt.id)] == ["started", "locked"]


def test_a_hot_pool_sends_one_statement_per_read_and_no_check(store, monkeypatch):
    attempt = store.start_attempt("one_tenant", "ada", "c1", 45 * 60, seed=7)
    store.attempt_by_token(attempt.token)
    sent = _statements(monkeypatch)
    for _ in range(20):
        assert store.attempt_by_token(attempt.token) == attempt
    assert len(sent) == 20 and "" not in sent


def test_a_connection_idle_past_the_limit_is_checked_with_a_round_trip_first(store, monkeypatch):
    attempt = store.start_attempt("one_tenant", "ada", "c1", 45 * 60, seed=7)
    monkeypatch.setattr(drills.store.pg_pool, "IDLE_CHECK_S", -1.0)
    sent = _statements(monkeypatch)
    for _ in range(5):
        store.attempt_by_token(attempt.token)
    assert sent.count("") == 5 and len(sent) == 10
