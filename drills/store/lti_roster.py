"""Course rosters from the LMS (LTI Names and Role Provisioning Services), for the board's "not started" list.

A launch that carries the NRPS claim records where its course's members can be read, as the roster source of
the course's class. The tool's LMS worker (deploy.lti.services) reads the members every ROSTER_EVERY_S, or
soon after an instructor asks (request_lti_roster_sync), and replaces the class's roster with them. A member
is matched to the app by the account their launches make (the platform's key and their LMS user id), so the
board can say which learners have not launched yet, and which have not started the drill.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from drills.store.contract import StorePart

ROSTER_EVERY_S = 15 * 60.0    # how old a roster may grow before the worker reads it again
MAX_MEMBERS = 5000            # members kept per class; a longer list is cut here
LEARNER_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"

# Migration 42 (drills.store.migrations): each LTI class's roster source, and its members as last read.
LTI_ROSTER_MIGRATION = """
    CREATE TABLE lti_roster_sources (
        cohort VARCHAR PRIMARY KEY,
        platform VARCHAR NOT NULL,
        issuer VARCHAR NOT NULL,
        client_id VARCHAR NOT NULL,
        memberships_url VARCHAR NOT NULL,
        requested_at DOUBLE NOT NULL,
        synced_at DOUBLE,
        last_error VARCHAR NOT NULL DEFAULT ''
    );
    CREATE TABLE lti_roster (
        cohort VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        email VARCHAR NOT NULL,
        roles VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        PRIMARY KEY (cohort, user_id)
    );
    """


@dataclass(frozen=True)
class RosterSource:
    cohort: str
    platform: str          # the account issuer of the platform's users (drills.store.lti.lti_issuer)
    issuer: str
    client_id: str
    memberships_url: str
    requested_at: float
    synced_at: float | None
    last_error: str


@dataclass(frozen=True)
class RosterMember:
    user_id: str
    name: str
    email: str
    learner: bool
    active: bool
    launched: bool         # they have come into the class from the LMS at least once
    attempts: int          # their attempts at the drill asked about


_SOURCE_COLUMNS = ("cohort, platform, issuer, client_id, memberships_url, requested_at, synced_at, last_error")


class LtiRosterStore(StorePart):
    """Roster sources of LTI classes and their members."""

    def set_lti_roster_source(self, cohort: str, platform: str, launch: dict) -> None:
        """Record (or refresh) where the class's members are read, from a launch with the NRPS claim."""
        url = launch.get("nrps_url")
        if not url:
            return
        with self._transaction() as cur:
            known = cur.execute("SELECT memberships_url FROM lti_roster_sources WHERE cohort = ?", [cohort]).fetchone()
            if known is not None and known[0] == url:
                return
            cur.execute("DELETE FROM lti_roster_sources WHERE cohort = ?", [cohort])
            cur.execute(f"INSERT INTO lti_roster_sources ({_SOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL, '')",
                        [cohort, platform, launch["issuer"], launch["client_id"], url, self.clock()])

    def lti_roster_source(self, cohort: str) -> RosterSource | None:
        row = self._one(f"SELECT {_SOURCE_COLUMNS} FROM lti_roster_sources WHERE cohort = ?", [cohort])
        return RosterSource(*row) if row else None

    def request_lti_roster_sync(self, cohort: str) -> None:
        """Ask the worker to read the class's roster at its next pass."""
        with self._transaction() as cur:
            cur.execute("UPDATE lti_roster_sources SET requested_at = ? WHERE cohort = ?", [self.clock(), cohort])

    def lti_rosters_due(self, every_s: float = ROSTER_EVERY_S) -> list[RosterSource]:
        """Sources never read, asked for since their last read, or read longer than `every_s` ago."""
        rows = self._all(f"SELECT {_SOURCE_COLUMNS} FROM lti_roster_sources WHERE synced_at IS NULL "
                         "OR requested_at > synced_at OR synced_at <= ? ORDER BY cohort", [self.clock() - every_s])
        return [RosterSource(*r) for r in rows]

    def replace_lti_roster(self, cohort: str, members: Iterable[dict]) -> int:
        """The class's roster becomes `members` (NRPS member objects); returns how many were kept."""
        kept: dict[str, list] = {}
        for m in members:
            uid = str(m.get("user_id") or "")
            if uid and len(kept) < MAX_MEMBERS:
                kept[uid] = [cohort, uid, str(m.get("name") or "")[:200], str(m.get("email") or "")[:200],
                             json.dumps([str(r) for r in m.get("roles") or []]), str(m.get("status") or "Active")]
        with self._transaction() as cur:
            cur.execute("DELETE FROM lti_roster WHERE cohort = ?", [cohort])
            rows = list(kept.values())
            for start in range(0, len(rows), 500):   # one statement per 500 members (both backends lack executemany)
                chunk = rows[start:start + 500]
                cur.execute("INSERT INTO lti_roster (cohort, user_id, name, email, roles, status) VALUES "
                            + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk)), [x for row in chunk for x in row])
            cur.execute("UPDATE lti_roster_sources SET synced_at = ?, last_error = '' WHERE cohort = ?",
                        [self.clock(), cohort])
        return len(kept)

    def lti_roster_failed(self, cohort: str, error: str) -> None:
        """Keep the roster as last read, note why this read failed; the worker tries again after ROSTER_EVERY_S."""
        with self._transaction() as cur:
            cur.execute("UPDATE lti_roster_sources SET synced_at = ?, last_error = ? WHERE cohort = ?",
                        [self.clock(), str(error)[:500], cohort])

    def lti_roster(self, cohort: str, drill_id: str) -> list[RosterMember]:
        """The class's roster as last read, each member with whether they launched and their attempts at the
        drill, by name."""
        rows = self._all(
            "SELECT r.user_id, r.name, r.email, r.roles, r.status, MAX(ac.id) IS NOT NULL, COUNT(a.id) "
            "FROM lti_roster r JOIN lti_roster_sources s ON s.cohort = r.cohort "
            "LEFT JOIN accounts ac ON ac.issuer = s.platform AND ac.subject = r.user_id "
            "LEFT JOIN candidates c ON c.account_id = ac.id AND c.cohort = r.cohort "
            "LEFT JOIN attempts a ON a.candidate_id = c.id AND a.drill_id = ? "
            "WHERE r.cohort = ? GROUP BY r.user_id, r.name, r.email, r.roles, r.status ORDER BY r.name, r.user_id",
            [drill_id, cohort])
        return [RosterMember(uid, name, email, LEARNER_ROLE in json.loads(roles), status == "Active", bool(launched),
                             int(n)) for uid, name, email, roles, status, launched, n in rows]
