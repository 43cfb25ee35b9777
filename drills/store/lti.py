"""The LTI tool's part of the store: nonces seen once, and the one-time codes that carry a launch to the app.

The side app (deploy.lti) validates a launch from the LMS, records its nonce here so no process of the class
accepts it twice, and hands the browser a short code; the Streamlit page redeems that code once, within its
lifetime, for the launch's identity, course and roles. Only a hash of each code is kept.
"""
from __future__ import annotations

import hashlib
import json
import secrets

from drills.store.contract import StorePart

CODE_LIFETIME_S = 60.0   # how long a launch code may wait to be redeemed


def launch_code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


class LtiStore(StorePart):
    """Nonces of accepted launches, and launch codes (hashed, single use, short lived)."""

    def use_lti_nonce(self, issuer: str, nonce: str, expires_at: float) -> bool:
        """Record a launch's nonce: True the first time, False if any process has already accepted it."""
        if not nonce:
            return False
        now = self.clock()
        with self._transaction() as cur:
            cur.execute("DELETE FROM lti_nonces WHERE expires_at < ?", [now])
            return self._insert_new(cur, "lti_nonces", "issuer, nonce, expires_at", [issuer, nonce, expires_at],
                                    {"issuer": issuer, "nonce": nonce})

    def issue_launch_code(self, launch: dict) -> str:
        """A fresh code for `launch` (a JSON-able dict), redeemable once within CODE_LIFETIME_S."""
        code = secrets.token_urlsafe(24)
        now = self.clock()
        with self._transaction() as cur:
            cur.execute("DELETE FROM lti_codes WHERE expires_at < ?", [now])
            cur.execute("INSERT INTO lti_codes (code_hash, launch, expires_at) VALUES (?, ?, ?)",
                        [launch_code_hash(code), json.dumps(launch, sort_keys=True), now + CODE_LIFETIME_S])
        return code

    def redeem_launch_code(self, code: str) -> dict | None:
        """The launch a code was issued for, once; None when unknown, already redeemed or expired."""
        if not isinstance(code, str) or not 10 <= len(code) <= 100:
            return None
        now = self.clock()
        with self._transaction() as cur:
            row = cur.execute("DELETE FROM lti_codes WHERE code_hash = ? RETURNING launch, expires_at",
                              [launch_code_hash(code)]).fetchone()
        if row is None or row[1] < now:
            return None
        return json.loads(row[0])
