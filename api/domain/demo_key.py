"""The demo Stammtisch's write key, kept where a local user looks for it.

Keys are stored as hashes only, so a lost key cannot be shown again. The demo is for trying
the program out on one's own computer: ``schocken demo`` keeps its key in the instance folder
of its SQLite database (``demo_key.json``, readable by the owner only), the start page of a
server that listens on loopback shows it (and offers to open the demo), and ``schocken key
rotate demo`` replaces it. A key that no longer matches the Stammtisch (renewed elsewhere) is
not shown.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from pathlib import Path

from ..storage import Stammtisch
from .stammtische import hash_token

#: the file in the instance folder
DEMO_KEY_FILE = "demo_key.json"


def demo_key_path(folder: str) -> Path:
    return Path(folder) / DEMO_KEY_FILE


def save_demo_key(folder: str, slug: str, token: str) -> Path:
    """Keep the demo's key in ``folder`` (replacing an older one, never half written)."""
    path = demo_key_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{DEMO_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"slug": slug, "token": token}, fh)
    os.replace(tmp, path)
    return path


def saved_demo_key(folder: str) -> tuple[str, str] | None:
    """(slug, key) kept in ``folder``, if any."""
    try:
        data = json.loads(demo_key_path(folder).read_text(encoding="utf-8"))
        return str(data["slug"]), str(data["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def key_fits(st: Stammtisch, token: str) -> bool:
    """Whether ``token`` is ``st``'s current key."""
    return hmac.compare_digest(hash_token(token), st.token_hash)
