"""Counts what a store sends its database: every statement, and whether it ran in a write transaction.

`counting(monkeypatch, store_class)` wraps the plumbing every store call goes through (`_reading`, `_transaction`),
so any store of that class (the app's own in an AppTest too) is counted; on PostgreSQL each statement is one round
trip, and a transaction adds its BEGIN and COMMIT.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Statements:
    sql: list[tuple[str, str]] = field(default_factory=list)   # ("read" | "write", the statement's first words)
    transactions: int = 0

    @property
    def reads(self) -> list[str]:
        return [text for kind, text in self.sql if kind == "read"]

    @property
    def writes(self) -> list[str]:
        return [text for kind, text in self.sql if kind == "write"]

    @property
    def round_trips(self) -> int:
        return len(self.sql) + 2 * self.transactions

    def clear(self) -> None:
        self.sql.clear()
        self.transactions = 0


class _Cursor:
    def __init__(self, cur, kind: str, seen: Statements):
        self._cur, self._kind, self._seen = cur, kind, seen

    def execute(self, sql, *args, **kwargs):
        self._seen.sql.append((self._kind, " ".join(str(sql).split())[:80]))
        return self._cur.execute(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._cur, name)


def counting(monkeypatch, store_class) -> Statements:
    """Count every statement any `store_class` store runs from now until the test ends."""
    seen = Statements()
    reading, transaction = store_class._reading, store_class._transaction

    @contextmanager
    def counted_reading(self):
        with reading(self) as cur:
            yield _Cursor(cur, "read", seen)

    @contextmanager
    def counted_transaction(self):
        seen.transactions += 1
        with transaction(self) as cur:
            yield _Cursor(cur, "write", seen)

    monkeypatch.setattr(store_class, "_reading", counted_reading)
    monkeypatch.setattr(store_class, "_transaction", counted_transaction)
    return seen
