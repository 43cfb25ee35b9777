"""Who someone is and what they may open: accounts, classes, handles and their resume codes.

Pure rules and the store's SQL for them (a mixin of StoreCore); no Streamlit. How often a secret may be guessed
is drills.store.throttle's. Identity comes from one place:
a signed-in OpenID Connect account when a provider is configured, else an anonymous handle with its code.
"""
from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass

from drills.records import Candidate
from drills.store.contract import StorePart
from drills.store.throttle import JOIN_TARGET, Client, TryKind

class AccessRefused(ValueError):
    """A clear, user-facing reason why an identity may not do something; nothing was stored."""


@dataclass(frozen=True)
class Account:
    """A signed-in person, as the provider names them (issuer and subject never change; e-mail may)."""

    id: int
    issuer: str
    subject: str
    email: str
    name: str


@dataclass(frozen=True)
class Learner:
    """Whose history and review schedule a session may read: one account, or one handle in one cohort."""

    account_id: int | None
    handle: str | None
    cohort: str
    label: str                     # how the page names them

    @property
    def review_key(self) -> str:
        """The owner written on review rows; a handle alone (no cohort) keeps its old key."""
        if self.account_id is not None:
            return f"account:{self.account_id}"
        return self.handle if not self.cohort else f"{self.handle}/{self.cohort}"


def anonymous_learner(handle: str, cohort: str) -> Learner:
    return Learner(None, handle, cohort, handle if not cohort else f"{handle} ({cohort})")


def account_learner(account: Account) -> Learner:
    return Learner(account.id, None, "", account.email or account.name)


@dataclass(frozen=True)
class Instructor:
    """A signed-in instructor: the name the audit trail records, and whose classes they see.

    `email` None is the embedded default's passphrase holder, who sees every cohort."""

    name: str
    email: str | None

    @property
    def target(self) -> str:
        """What their sign-ins are recorded under in access_tries."""
        return self.email if self.email is not None else "passphrase"


@dataclass(frozen=True)
class ClassInfo:
    cohort: str
    title: str
    owner_email: str
    requires_sign_in: bool
    instructors: tuple[str, ...]   # e-mails named on the class besides its owner


JOIN_CODE_BYTES = 12               # about 96 bits: a join link cannot be guessed, and guesses are throttled too
_CLASS_CODE = re.compile(r"[^a-z0-9]+")


def new_join_code() -> str:
    return secrets.token_urlsafe(JOIN_CODE_BYTES)


def join_code_hash(code: str) -> str:
    return hashlib.sha256((code or "").strip().encode()).hexdigest()


def class_cohort(title: str, taken: set[str]) -> str:
    """A cohort code made from a class title: lower-case letters and digits with dashes, made unique."""
    base = _CLASS_CODE.sub("-", title.lower()).strip("-")[:16] or "class"
    cohort, n = base, 2
    while cohort in taken:
        cohort, n = f"{base}-{n}", n + 1
    return cohort


def normal_email(email: object) -> str:
    return str(email or "").strip().lower()


def email_list(text: object) -> tuple[str, ...]:
    """E-mails from a setting or a form field: commas, semicolons, spaces or new lines between them."""
    if isinstance(text, (list, tuple)):
        items = [normal_email(t) for t in text]
    else:
        items = [normal_email(t) for t in re.split(r"[\s,;]+", str(text or ""))]
    bad = [item for item in items if item and not re.fullmatch(r"[^@\s]+@[^@\s]+", item)]
    if bad:
        raise AccessRefused(f"Not an e-mail address: {bad[0]}")
    return tuple(dict.fromkeys(item for item in items if item))


def is_instructor_account(email: str, claims: dict, allowed_emails: tuple[str, ...],
                          claim_rule: str | None) -> bool:
    """Instructors are accounts named in the settings: by e-mail, or by a claim such as 'roles=instructor'.

    A claim rule `name=value` matches when the claim equals the value or is a list holding it."""
    if normal_email(email) and normal_email(email) in allowed_emails:
        return True
    if not claim_rule or "=" not in claim_rule:
        return False
    name, _, wanted = claim_rule.partition("=")
    value = claims.get(name.strip())
    wanted = wanted.strip()
    return value == wanted or (isinstance(value, (list, tuple)) and wanted in value)


def handle_key(handle: str) -> str:
    """A handle as people read it: NFKC-normalised, case-folded and its runs of whitespace one space, so ADA,
    ` ada ` and ａｄａ are one handle. Claims and look-ups compare keys; the row keeps what was typed first."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", handle).casefold())
    return " ".join(folded.split())


def handle_named(typed: str, stored: str | None) -> str:
    """How a message names a typed handle: “ada”, or “ADA” (read the same as “ada”) when it is a look-alike."""
    return f"“{typed}”" if stored is None or stored == typed else f"“{typed}” (read the same as “{stored}”)"


# The candidate a typed handle names in a cohort: the row it reads as (by key), or a look-alike taken before keys
# existed (left without one, see migration 31) when it is spelled exactly so.
_BY_HANDLE = ("SELECT id, handle, cohort, account_id FROM candidates WHERE cohort = ? AND (handle_key = ? OR handle = ?) "
              "ORDER BY (handle = ?) DESC, id LIMIT 1")


def _by_handle(handle: str, cohort: str) -> list:
    return [cohort, handle_key(handle), handle, handle]


def resume_target(handle: str, cohort: str) -> str:
    """What a throttle counts tries at one handle's code under: the handle as read, and its cohort."""
    return handle_key(handle) + (f"/{cohort}" if cohort else "")


_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"   # no 0/O or 1/I to misread


def new_resume_code() -> str:
    """Eight characters in two groups (about 40 bits), e.g. 'K7QM-3XHD'."""
    raw = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def resume_code_hash(code: str) -> str:
    """The stored form of a code: SHA-256 of its letters and digits, upper-cased."""
    cleaned = re.sub(r"[^0-9A-Za-z]", "", code or "").upper()
    return hashlib.sha256(cleaned.encode()).hexdigest()


class AccountsStore(StorePart):
    """The store's accounts, classes and resume codes (mixed into StoreCore; same plumbing).

    Every write here goes through `_transaction`, so DuckDB and PostgreSQL share the SQL."""

    # -- accounts --------------------------------------------------------------------------
    def account_for(self, issuer: str, subject: str, email: str = "", name: str = "") -> Account:
        """The account a provider's (issuer, subject) names, made on its first sign-in."""
        with self._transaction() as cur:
            cur.execute("INSERT INTO accounts (issuer, subject, email, name, created_at) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT DO NOTHING", [issuer, subject, normal_email(email), name[:200], self.clock()])
            row = cur.execute("SELECT id, issuer, subject, email, name FROM accounts WHERE issuer = ? AND subject = ?",
                              [issuer, subject]).fetchone()
        return Account(*row)

    def account_by_id(self, account_id: int) -> Account | None:
        row = self._one("SELECT id, issuer, subject, email, name FROM accounts WHERE id = ?", [account_id])
        return Account(*row) if row else None

    def account_candidate(self, account: Account, cohort: str, display_name: str | None = None):
        """The candidate row an account works under in a cohort ('' for practice outside any class).

        Outside a class it is named by the account's e-mail (no anonymous handle holds an '@'); in a class,
        by the display name it joined with, unique in that class."""
        with self._transaction() as cur:
            row = cur.execute("SELECT id, handle, cohort FROM candidates WHERE account_id = ? AND cohort = ?",
                              [account.id, cohort]).fetchone()
            if row is not None:
                return Candidate(*row)
            name = (display_name or account.email or f"account {account.id}") if cohort else (
                account.email or f"account {account.id}")
            taken = cur.execute(_BY_HANDLE, _by_handle(name, cohort)).fetchone()
            if taken is not None:
                raise AccessRefused(f"The name {handle_named(name, taken[1])} is taken in this class: pick another.")
            cur.execute("INSERT INTO candidates (handle, cohort, created_at, account_id, handle_key) VALUES (?, ?, ?, ?, ?)",
                        [name, cohort, self.clock(), account.id, handle_key(name)])
            row = cur.execute("SELECT id, handle, cohort FROM candidates WHERE account_id = ? AND cohort = ?",
                              [account.id, cohort]).fetchone()
        return Candidate(*row)

    def account_cohorts(self, account_id: int) -> list[tuple[str, str]]:
        """(cohort, display name) of every class the account has joined, in joining order."""
        return [tuple(r) for r in self._all(
            "SELECT cohort, handle FROM candidates WHERE account_id = ? AND cohort <> '' ORDER BY created_at, id",
            [account_id])]

    # -- anonymous handles -----------------------------------------------------------------
    def ensure_candidate(self, handle: str, cohort: str = "") -> Candidate:
        """The candidate a handle names in a cohort, made the first time: the row it reads as, if any."""
        with self._transaction() as cur:
            cur.execute("INSERT INTO candidates (handle, cohort, created_at, handle_key) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT DO NOTHING", [handle, cohort, self.clock(), handle_key(handle)])
            row = cur.execute(_BY_HANDLE, _by_handle(handle, cohort)).fetchone()
        return Candidate(*row[:3])

    def stored_handle(self, handle: str, cohort: str) -> str | None:
        """The handle as stored (typed by whoever took it first) that `handle` reads as; None when nobody has it."""
        row = self._one(_BY_HANDLE, _by_handle(handle, cohort))
        return row[1] if row else None

    def learner(self, handle: str, cohort: str) -> Learner:
        """Whose history a proven handle opens: the stored one it reads as, so ADA and ada share one history."""
        return anonymous_learner(self.stored_handle(handle, cohort) or handle, cohort)

    def handle_status(self, handle: str, cohort: str) -> str:
        """'free' (never used), 'coded' (has a resume code), 'closed' (used, with no code: nobody may take it
        up again), or 'account' (a signed-in account's name in this class). A look-alike has its original's."""
        row = self._one(_BY_HANDLE, _by_handle(handle, cohort))
        if row is None:
            return "free"
        if row[3] is not None:
            return "account"
        if self._one("SELECT 1 FROM candidate_codes WHERE candidate_id = ?", [row[0]]) is not None:
            return "coded"
        used = self._one("SELECT 1 FROM attempts WHERE candidate_id = ? LIMIT 1", [row[0]])
        return "closed" if used else "free"

    def claim_handle(self, handle: str, cohort: str) -> str | None:
        """Take up a handle that nobody has used: its new resume code (returned this once), or None when the
        handle, or one it reads the same as, is already in use (then only its code, through check_resume_code,
        lets anyone back in)."""
        claimed = self.claim_candidate(handle, cohort)
        return None if claimed is None else claimed[1]

    def claim_candidate(self, handle: str, cohort: str) -> tuple[Candidate, str] | None:
        """claim_handle with the candidate row it took up (as ensure_candidate reads it), from the same transaction."""
        code = new_resume_code()
        with self._transaction() as cur:
            cur.execute("INSERT INTO candidates (handle, cohort, created_at, handle_key) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT DO NOTHING", [handle, cohort, self.clock(), handle_key(handle)])
            candidate_id, stored, stored_cohort, account_id = cur.execute(_BY_HANDLE, _by_handle(handle, cohort)).fetchone()
            if account_id is not None:
                return None
            if cur.execute("SELECT 1 FROM attempts WHERE candidate_id = ? LIMIT 1", [candidate_id]).fetchone():
                return None    # used already (a code of its own, or none at all): never a fresh code
            created = self._insert_new(cur, "candidate_codes", "candidate_id, code_hash, created_at",
                                       [candidate_id, resume_code_hash(code), self.clock()],
                                       {"candidate_id": candidate_id})
        return (Candidate(candidate_id, stored, stored_cohort), code) if created else None

    def check_resume_code(self, handle: str, code: str, cohort: str = "", *, client: Client) -> bool:
        """Whether `code` opens (handle, cohort); `client`'s tries are throttled (Throttled, see drills.store.throttle)."""
        def matches() -> bool:
            found = self._one(_BY_HANDLE, _by_handle(handle, cohort))
            row = (self._one("SELECT code_hash FROM candidate_codes WHERE candidate_id = ?", [found[0]])
                   if found is not None and found[3] is None else None)
            return row is not None and secrets.compare_digest(row[0], resume_code_hash(code))

        return self.attempt_secret(TryKind.RESUME, resume_target(handle, cohort), matches, client=client)

    def learner_attempts(self, learner: Learner):
        """Every attempt the learner made: an account's in every class, a handle's in its one cohort."""
        if learner.account_id is not None:
            return self._attempts_where("c.account_id = ?", [learner.account_id])
        return self._attempts_where("c.handle = ? AND c.cohort = ? AND c.account_id IS NULL",
                                    [learner.handle, learner.cohort])

    # -- classes ---------------------------------------------------------------------------
    def create_class(self, title: str, owner_email: str, *, requires_sign_in: bool = True,
                     instructors: tuple[str, ...] = ()) -> tuple[ClassInfo, str]:
        """A new class and its join code (returned this once; the store keeps its hash)."""
        title = " ".join(str(title or "").split())
        if not title:
            raise AccessRefused("Give the class a name.")
        if len(title) > 80:
            raise AccessRefused("Keep the class name under 80 characters.")
        code = new_join_code()
        now = self.clock()
        with self._transaction() as cur:
            taken = {r[0] for r in cur.execute("SELECT DISTINCT cohort FROM candidates UNION "
                                               "SELECT cohort FROM classes").fetchall()}
            cohort = class_cohort(title, taken)
            cur.execute("INSERT INTO classes (cohort, title, join_hash, owner_email, requires_sign_in, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        [cohort, title, join_code_hash(code), normal_email(owner_email), requires_sign_in, now])
            for email in instructors:
                cur.execute("INSERT INTO class_instructors (cohort, email, added_by, added_at) VALUES (?, ?, ?, ?) "
                            "ON CONFLICT DO NOTHING", [cohort, normal_email(email), normal_email(owner_email), now])
        return self.class_info(cohort), code

    def renew_join_code(self, cohort: str) -> str:
        """A new join code for a class (returned this once); the old link stops working. Classes are settings,
        not records, so this one row is changed in place."""
        code = new_join_code()
        with self._transaction() as cur:
            cur.execute("UPDATE classes SET join_hash = ? WHERE cohort = ?", [join_code_hash(code), cohort])
        return code

    def class_info(self, cohort: str) -> ClassInfo | None:
        row = self._one("SELECT cohort, title, owner_email, requires_sign_in FROM classes WHERE cohort = ?", [cohort])
        if row is None:
            return None
        named = tuple(r[0] for r in self._all("SELECT email FROM class_instructors WHERE cohort = ? ORDER BY email",
                                              [cohort]))
        return ClassInfo(row[0], row[1], row[2], bool(row[3]), named)

    def classes_for(self, email: str | None) -> list[ClassInfo]:
        """The classes an instructor owns or is named on (every class when `email` is None: the passphrase)."""
        if email is None:
            rows = self._all("SELECT cohort FROM classes ORDER BY created_at")
        else:
            email = normal_email(email)
            rows = self._all("SELECT cohort FROM classes WHERE owner_email = ? OR cohort IN "
                             "(SELECT cohort FROM class_instructors WHERE email = ?) ORDER BY created_at", [email, email])
        return [self.class_info(r[0]) for r in rows]

    def class_by_join_code(self, code: str, client: Client) -> ClassInfo | None:
        """The class a join code opens, throttled per browser and address (Throttled); None when no class has it."""
        found: list[str] = []

        def matches() -> bool:
            row = self._one("SELECT cohort FROM classes WHERE join_hash = ?", [join_code_hash(code)])
            if row is not None:
                found.append(row[0])
            return row is not None

        self.attempt_secret(TryKind.JOIN, JOIN_TARGET, matches, client=client)
        return self.class_info(found[0]) if found else None


def may_open(attempt_account: int | None, viewer: Account | None) -> bool:
    """An account's attempt opens only for that account; an anonymous attempt's token is its key."""
    return attempt_account is None or (viewer is not None and viewer.id == attempt_account)


def attempt_learner(attempt) -> Learner:
    """Whose history and review schedule an attempt belongs to."""
    if attempt.account_id is not None:
        return Learner(attempt.account_id, None, "", attempt.handle)
    return anonymous_learner(attempt.handle, attempt.cohort)
