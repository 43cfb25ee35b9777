"""The tool's RSA keys: one PEM file per key in a folder, named by when it was made; the newest signs and
every one is published. A key's `kid` is its JWK thumbprint, as pylti1p3 puts it on what it signs.

Rotating adds a new key (so it signs from now on) and keeps the older ones published until they are removed
by hand, so a platform that cached the old key set still verifies what was signed before.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pylti1p3.registration import Registration


def add_key(folder: Path, now: float | None = None) -> str:
    """Make a 2048-bit RSA key in `folder` and return its name (the time it was made, so names sort by age)."""
    folder.mkdir(parents=True, exist_ok=True)
    kid = f"fl-{int(now if now is not None else time.time())}"
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    write_once(folder / f"{kid}.pem", pem)
    return kid


def write_once(path: Path, content: bytes) -> bool:
    """Write `path` whole, readable by its owner only, unless it exists: workers starting together may race
    here, and each must end up reading one finished file. True when this call wrote it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_bytes(content)
    temporary.chmod(0o600)
    try:
        os.link(temporary, path)   # fails if another worker got there first
        return True
    except FileExistsError:
        return False
    finally:
        temporary.unlink()


def key_ids(folder: Path) -> list[str]:
    """The keys' names in `folder`, oldest first."""
    return sorted(p.stem for p in folder.glob("*.pem"))


def signing_key(folder: Path) -> tuple[str, str]:
    """(name, private PEM) of the newest key; makes a first key when the folder has none."""
    kids = key_ids(folder) or [add_key(folder)]
    return kids[-1], (folder / f"{kids[-1]}.pem").read_text()


def public_pem(private_pem: str) -> str:
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def key_set(folder: Path) -> dict:
    """The JWKS the tool publishes: the public half of every key in the folder, each under its kid."""
    return {"keys": [Registration.get_jwk(public_pem((folder / f"{name}.pem").read_text()))
                     for name in key_ids(folder)]}
