"""Hot-tenant event store lab: versioned bucket routing, idempotent writes, bounded reads, fenced owner.

Everything persists in DuckDB; pass a file path or use the in-memory default. No Streamlit here.
"""
from labs.hot_tenant.db import Database
from labs.hot_tenant.merge import Page, latest, latest_naive
from labs.hot_tenant.owner import Lease, LeaseHeld, OrderedStream, StaleOwner, StreamEvent
from labs.hot_tenant.router import RoutingVersion, bucket_for
from labs.hot_tenant.store import Event, EventStore, WriteOutcome

__all__ = [
    "Database", "Event", "EventStore", "Lease", "LeaseHeld", "OrderedStream", "Page",
    "RoutingVersion", "StaleOwner", "StreamEvent", "WriteOutcome", "bucket_for", "latest",
    "latest_naive",
]
