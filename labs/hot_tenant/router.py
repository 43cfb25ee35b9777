"""Deterministic bucket routing: an event's bucket is a stable hash of its id, modulo the bucket count.

A routing version fixes the bucket count; changing the count means a new version, never an edit.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

ROUTE_HASH_PERSON = b"faultlines-route"  # blake2b personalisation (16 bytes): keeps this hash apart


@dataclass(frozen=True)
class RoutingVersion:
    """How many buckets a tenant had from one version on; stored, never edited."""

    tenant_id: str
    version: int
    buckets: int

    def bucket_of(self, event_id: str) -> int:
        return bucket_for(self.tenant_id, event_id, self.buckets)


def bucket_for(tenant_id: str, event_id: str, buckets: int) -> int:
    """Same inputs, same bucket, in every process and Python version (unlike ``hash()``)."""
    if buckets < 1:
        raise ValueError(f"buckets must be at least 1, got {buckets}")
    # The separator keeps ("ab", "c") and ("a", "bc") from hashing alike.
    material = f"{tenant_id}\x1f{event_id}".encode("utf-8")
    digest = hashlib.blake2b(material, digest_size=8, person=ROUTE_HASH_PERSON).digest()
    return int.from_bytes(digest, "big") % buckets
