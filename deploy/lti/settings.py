"""The LTI tool's settings: a JSON or TOML file named by FAULTLINES_LTI_SETTINGS.

    app_url     where the Streamlit app is served (the launch hands the browser there with ?lti=CODE)
    tool_url    where this side app is served, e.g. https://class.example/lti (its routes hang below it)
    key_dir     the folder of the tool's RSA keys (deploy.lti.keys), made on first use
    platforms   one entry per registration: issuer, client_id, deployment_ids, key_set_url,
                auth_login_url, auth_token_url

A file that is missing a field is refused with a message naming it; nothing is started from half a file.
"""
from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

SETTINGS_ENV = "FAULTLINES_LTI_SETTINGS"


@dataclass(frozen=True)
class Platform:
    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    key_set_url: str
    auth_login_url: str
    auth_token_url: str


PLATFORM_FIELDS = tuple(f.name for f in fields(Platform))   # each registration must give every one


@dataclass(frozen=True)
class LtiSettings:
    app_url: str
    tool_url: str
    key_dir: Path
    platforms: tuple[Platform, ...]

    @property
    def launch_url(self) -> str:
        return self.tool_url.rstrip("/") + "/launch"

    def tool_conf(self) -> dict:
        """The registrations as pylti1p3's ToolConfDict reads them (keys are added separately)."""
        conf: dict[str, list[dict]] = {}
        for p in self.platforms:
            conf.setdefault(p.issuer, []).append({
                "default": not conf.get(p.issuer), "client_id": p.client_id,
                "auth_login_url": p.auth_login_url, "auth_token_url": p.auth_token_url,
                "key_set_url": p.key_set_url, "key_set": None, "deployment_ids": list(p.deployment_ids)})
        return conf


class SettingsError(ValueError):
    """The settings file is missing, unreadable or incomplete; the message says which."""


def parse_settings(raw: dict, base: Path) -> LtiSettings:
    for field in ("app_url", "tool_url", "key_dir", "platforms"):
        if not raw.get(field):
            raise SettingsError(f"LTI settings need '{field}'")
    platforms = []
    for i, entry in enumerate(raw["platforms"]):
        missing = [f for f in PLATFORM_FIELDS if not entry.get(f)]
        if missing:
            raise SettingsError(f"LTI platform {i + 1} needs {', '.join(missing)}")
        ids = entry["deployment_ids"]
        if not isinstance(ids, list) or not all(isinstance(d, str) and d for d in ids):
            raise SettingsError(f"LTI platform {i + 1}: deployment_ids must be a list of strings")
        platforms.append(Platform(entry["issuer"], entry["client_id"], tuple(ids), entry["key_set_url"],
                                  entry["auth_login_url"], entry["auth_token_url"]))
    key_dir = Path(raw["key_dir"])
    return LtiSettings(raw["app_url"], raw["tool_url"], key_dir if key_dir.is_absolute() else base / key_dir,
                       tuple(platforms))


def load_settings(path: str | os.PathLike | None = None) -> LtiSettings:
    """Read the file `path` names, else FAULTLINES_LTI_SETTINGS's."""
    where = path or os.environ.get(SETTINGS_ENV)
    if not where:
        raise SettingsError(f"set {SETTINGS_ENV} to the LTI settings file")
    file = Path(where)
    try:
        text = file.read_text()
        raw = tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as error:
        raise SettingsError(f"cannot read LTI settings {file}: {error}") from error
    return parse_settings(raw, file.parent)
