"""The instructor passphrase: only a salted PBKDF2 hash is configured, and it is compared in constant time.

Configure FAULTLINES_INSTRUCTOR_HASH (or the `instructor_hash` secret); `python -m drills.access` prints one.
"""
from __future__ import annotations

import argparse
import getpass
import hashlib
import hmac
import os
import secrets
import sys
from dataclasses import dataclass

HASH_ENV = "FAULTLINES_INSTRUCTOR_HASH"
SECRET_KEY = "instructor_hash"
SCHEME = "pbkdf2_sha256"
ITERATIONS = 240_000
MIN_PASSPHRASE = 10
MAX_PASSPHRASE = 256


class AccessError(ValueError):
    """A configured hash that cannot be used, or a passphrase too weak to hash."""


@dataclass(frozen=True)
class PassphraseHash:
    iterations: int
    salt: bytes
    digest: bytes

    def encode(self) -> str:
        return f"{SCHEME}${self.iterations}${self.salt.hex()}${self.digest.hex()}"


def _derive(passphrase: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", passphrase.encode("utf-8"), salt, iterations)


def hash_passphrase(passphrase: str, *, iterations: int = ITERATIONS, salt: bytes | None = None) -> str:
    """The string to configure: scheme, iterations, salt and digest joined by '$'."""
    if len(passphrase) < MIN_PASSPHRASE:
        raise AccessError(f"Use a passphrase of at least {MIN_PASSPHRASE} characters.")
    if len(passphrase) > MAX_PASSPHRASE:
        raise AccessError(f"Keep the passphrase under {MAX_PASSPHRASE} characters.")
    salt = salt if salt is not None else secrets.token_bytes(16)
    return PassphraseHash(iterations, salt, _derive(passphrase, salt, iterations)).encode()


def parse_hash(encoded: str) -> PassphraseHash:
    parts = encoded.strip().split("$")
    if len(parts) != 4 or parts[0] != SCHEME:
        raise AccessError(f"The configured hash must look like {SCHEME}$<iterations>$<salt hex>$<digest hex>; "
                          "make one with `python -m drills.access`.")
    try:
        iterations = int(parts[1])
        salt, digest = bytes.fromhex(parts[2]), bytes.fromhex(parts[3])
    except ValueError:
        raise AccessError("The configured hash is damaged (iterations or hex fields do not parse).") from None
    if not 1_000 <= iterations <= 10_000_000 or len(salt) < 8 or len(digest) != 32:
        raise AccessError("The configured hash has an implausible iteration count, salt or digest length.")
    return PassphraseHash(iterations, salt, digest)


def verify(passphrase: str, encoded: str) -> bool:
    """True when the passphrase matches; the digests are compared in constant time."""
    if not passphrase or len(passphrase) > MAX_PASSPHRASE:
        return False
    stored = parse_hash(encoded)
    return hmac.compare_digest(_derive(passphrase, stored.salt, stored.iterations), stored.digest)


def configured_hash(secret_value: object = None) -> str | None:
    """The hash in force: the environment variable wins over the secret the UI layer passes in."""
    for value in (os.environ.get(HASH_ENV), secret_value):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def fingerprint(encoded: str) -> str:
    """What a signed-in session remembers: which configured hash it signed in under (never the hash itself)."""
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def session_still_valid(remembered: object, encoded: str | None) -> bool:
    """A session stays signed in only under the hash it signed in with; None means no usable hash is configured.

    A session that fails this once must sign in again, even if the old hash comes back later."""
    return encoded is not None and isinstance(remembered, str) and hmac.compare_digest(remembered, fingerprint(encoded))


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="python -m drills.access",
        description="Make the hash that unlocks the instructor pages.\n\n"
                    "The passphrase is read from the terminal (asked twice, not echoed) or from a pipe\n"
                    "(one line). Only the salted PBKDF2 hash is printed, on stdout; how to configure it\n"
                    "goes to stderr.",
        epilog=f"Examples:\n  python -m drills.access\n  echo 'a long passphrase' | python -m drills.access\n\n"
               f"Then:  export {HASH_ENV}='{SCHEME}$...'\n"
               f"or in .streamlit/secrets.toml:  {SECRET_KEY} = \"{SCHEME}$...\"\n"
               f"Passphrases need {MIN_PASSPHRASE} to {MAX_PASSPHRASE} characters.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def main(argv: list[str] | None = None) -> int:
    """Read a passphrase (twice on a terminal, once from a pipe) and print the hash to configure."""
    build_parser().parse_args(argv)   # --help prints and exits; anything unknown is an error, not a wait on stdin
    if sys.stdin.isatty():
        first = getpass.getpass("Instructor passphrase: ")
        if getpass.getpass("Again: ") != first:
            print("The two entries differ; nothing printed.", file=sys.stderr)
            return 1
    else:
        first = sys.stdin.readline().rstrip("\r\n")
    try:
        encoded = hash_passphrase(first)
    except AccessError as problem:
        print(problem, file=sys.stderr)
        return 1
    print(encoded)
    print(f"\nSet it with:  export {HASH_ENV}='{encoded}'\n"
          f"or in .streamlit/secrets.toml:  {SECRET_KEY} = \"{encoded}\"", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
