"""Stable key placement for the sharding models: a process-independent hash and jump hashing.

Python's built-in ``hash()`` of a string changes between processes, so placement would not
repeat from one run to the next; everything here depends only on the key's text.
"""
from __future__ import annotations

import hashlib

_MASK64 = (1 << 64) - 1
_JUMP_MULTIPLIER = 2862933555777941757      # the LCG constant from Lamping & Veach (2014)


def stable_hash(key: str) -> int:
    """A 64-bit hash of ``key`` that is the same in every process and on every machine."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def jump_bucket(key: str, buckets: int) -> int:
    """Jump consistent hash: place ``key`` in one of ``buckets`` buckets.

    Growing from n to n + 1 buckets moves a key only into the new bucket (never between old
    ones), so the keys beside a key that stays put can only thin out as buckets are added.
    """
    if buckets < 1:
        raise ValueError(f"buckets must be at least 1, got {buckets}")
    state, bucket, candidate = stable_hash(key), -1, 0
    while candidate < buckets:
        bucket = candidate
        state = (state * _JUMP_MULTIPLIER + 1) & _MASK64
        candidate = int((bucket + 1) * (float(1 << 31) / float((state >> 33) + 1)))
    return bucket


def pick_groups(key: str, groups: int, per_key: int) -> tuple[int, ...]:
    """``per_key`` distinct groups out of ``groups`` for ``key`` (shuffle sharding), sorted.

    The first pick is ``jump_bucket(key, groups)``, so one group per key is plain hashing.
    Each later pick jump-hashes a salted key over the groups not yet taken.
    """
    if not 1 <= per_key <= groups:
        raise ValueError(f"per_key must be between 1 and {groups}, got {per_key}")
    chosen = [jump_bucket(key, groups)]
    for pick in range(1, per_key):
        left = [g for g in range(groups) if g not in chosen]
        chosen.append(left[jump_bucket(f"{key}#{pick}", len(left))])
    return tuple(sorted(chosen))
