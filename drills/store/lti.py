"""The LTI tool's part of the store: nonces seen once, and the one-time codes that carry a launch to the app.

The side app (deploy.lti) validates a launch from the LMS, records its nonce here so no process of the class
accepts it twice, and hands the browser a short code; the Streamlit page redeems that code once, within its
lifetime, for the launch's identity, course and roles. Only a hash of each code is kept.
"""
from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass

from drills.store.accounts import AccessRefused, Account
from drills.store.lti_grades import LtiGradesStore
from drills.store.lti_roster import LtiRosterStore

CODE_LIFETIME_S = 60.0   # how long a launch code may wait to be redeemed


def launch_code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def lti_issuer(launch: dict) -> str:
    """The account issuer an LTI user is kept under: the platform, its client and its deployment, so one
    LMS user is one account per tool registration (the subject is only unique there)."""
    return f"lti {launch['issuer']} {launch['client_id']} {launch['deployment_id']}"


@dataclass(frozen=True)
class LtiVisit:
    """Who a redeemed launch signs in, the class (cohort) their course is, and whether they teach it."""
    account: Account
    cohort: str
    instructor: bool
    drill_id: str = ""     # the (scoped) drill the LMS link names, '' when it names none
    live: bool = False     # the link is to a live room of that drill, run by the class's instructor
    key: str = ""          # this launch's own mark, so the page acts on each launch once


class LtiStore(LtiGradesStore, LtiRosterStore):
    """Nonces of accepted launches, and launch codes (hashed, single use, short lived); the grade outbox
    (drills.store.lti_grades) and course rosters (drills.store.lti_roster)."""

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

    def lti_visit(self, launch: dict) -> LtiVisit:
        """The account, class and role a redeemed launch stands for, made on first sight: the LMS course is a
        class of its own, its Instructor and TA roles are instructors of it (by e-mail, as classes name them)."""
        account = self.account_for(lti_issuer(launch), launch["subject"], launch.get("email", ""),
                                   launch.get("name", ""))
        key = [lti_issuer(launch), launch.get("context_id") or ""]
        row = self._one("SELECT cohort FROM lti_classes WHERE platform = ? AND context_id = ?", key)
        if row is None:
            info, _ = self.create_class(launch.get("context_title") or "LMS course", "", requires_sign_in=True)
            with self._transaction() as cur:
                # A launch racing this one may have mapped the course first: its class wins, this one stays empty.
                self._insert_new(cur, "lti_classes", "platform, context_id, cohort", key + [info.cohort],
                                 {"platform": key[0], "context_id": key[1]})
            row = self._one("SELECT cohort FROM lti_classes WHERE platform = ? AND context_id = ?", key)
        cohort = row[0]
        self.set_lti_roster_source(cohort, key[0], launch)
        instructor = bool(launch.get("instructor"))
        if instructor and account.email:
            with self._transaction() as cur:
                self._insert_new(cur, "class_instructors", "cohort, email, added_by, added_at",
                                 [cohort, account.email, "lti", self.clock()], {"cohort": cohort, "email": account.email})
        elif not instructor:
            name = " ".join(str(launch.get("name") or "").split())[:60] or f"learner {account.id}"
            try:
                candidate = self.account_candidate(account, cohort, name)
            except AccessRefused:   # two people of the course share a name: the later one is told apart
                candidate = self.account_candidate(account, cohort, f"{name} ({account.id})")
            self.set_lti_grade_target(candidate.id, launch)
        return LtiVisit(account, cohort, instructor, str(launch.get("drill_id") or ""),
                        (launch.get("custom") or {}).get("scope") == "live", secrets.token_hex(8))
