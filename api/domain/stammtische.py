"""Stammtische: create one (its write token is shown once and kept as a hash), read, change,
and the access rule: writes (and reads of a private Stammtisch) need its token."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata
from dataclasses import dataclass, replace
from typing import Any

from ..storage import Stammtisch, StorageConflict
from .base import UseCases, rules_of
from .errors import Conflict, Forbidden, NotFound, Unauthorized
from .names import new_name

#: longest name of a Stammtisch
NAME_MAX = 80
#: longest Kurzname (slug): the part of every URL that names the Stammtisch
SLUG_MAX = 40
#: a Kurzname: lower-case letters, digits and inner dashes
SLUG_PATTERN = rf"[a-z0-9](?:[a-z0-9-]{{0,{SLUG_MAX - 2}}}[a-z0-9])?"
SLUG_RULE = f"Nur Kleinbuchstaben, Ziffern und Bindestriche (höchstens {SLUG_MAX} Zeichen)."
#: where a Stammtisch shows the odds of a throw ("Chancen"): nowhere (the default: some tables
#: call it cheating), in the form's throw-by-throw input, or there and on the TV page
ODDS_SHOWN = ("off", "form", "form_and_tv")

_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def hash_token(token: str) -> str:
    """How a write token is stored: its sha256, never the token itself."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def slugify(name: str) -> str:
    """The Kurzname proposed for a Stammtisch's name: ASCII, lower case, dashes."""
    text = unicodedata.normalize("NFKD", name.lower().translate(_UMLAUTS))
    text = text.encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:SLUG_MAX].strip("-")
    return slug or "stammtisch"


class StammtischUseCases(UseCases):
    def create_stammtisch(self, data: dict[str, Any]) -> tuple[Stammtisch, str]:
        """A new Stammtisch and its write token (the only time the token is seen)."""
        rules = rules_of(data["rules"]).to_config()
        name = new_name(data["name"])
        token = secrets.token_urlsafe(32)
        now = self.clock()
        explicit = data.get("slug")
        base = explicit or slugify(name)
        for attempt in range(1, 1000):
            # room for the longest suffix, "-999"
            slug = base if attempt == 1 else f"{base[: SLUG_MAX - 4]}-{attempt}"
            if self.repo.get_stammtisch(slug) is None:
                try:
                    with self.writing():
                        new = Stammtisch(
                            0, slug, name, rules, data["private"], hash_token(token), now,
                            data.get("odds_shown", "off"),
                        )  # fmt: skip
                        st = self.repo.add_stammtisch(new)
                        # its (empty) statistics are the refresher's to compute: a read
                        # never computes them (dashboard/readmodel.py)
                        self.repo.mark_stats_stale([st.id])
                    return st, token
                except StorageConflict:
                    pass
            if explicit:
                raise Conflict(
                    f"Den Stammtisch „{slug}“ gibt es schon.", field="slug", code="name_taken"
                )
        raise Conflict("Kein freier Kurzname gefunden.", code="name_taken")  # pragma: no cover

    def stammtisch(self, slug: str) -> Stammtisch:
        """Read from the database every time (one look-up by the unique slug): a change of
        name, privacy or rules in another server process counts at once."""
        st = self.repo.get_stammtisch(slug)
        if st is None:
            raise _not_found(slug)
        return st

    @staticmethod
    def authorize(st: Stammtisch, token: str | None) -> None:
        """A write (or a read of a private Stammtisch) needs this Stammtisch's token."""
        _authorize(token, _matches(st, token))

    def caller(self, slug: str, token: str | None) -> Caller:
        """The Stammtisch of ``slug`` (read from the database: a change in another server
        process counts at once) and whether ``token`` is its key: one look-up, one hash."""
        st = self.repo.get_stammtisch(slug)
        return Caller(slug, st, token, st is not None and _matches(st, token))

    def readable(self, slug: str, token: str | None) -> Stammtisch:
        return self.caller(slug, token).readable()

    def writable(self, slug: str, token: str | None) -> Stammtisch:
        return self.caller(slug, token).writable()

    def _hidden(self, st: Stammtisch, token: str | None) -> None:
        """A private Stammtisch does not show that it exists: without its token (none, or
        another's) the answer is the 404 of a slug nobody took."""
        if not _matches(st, token):
            raise _not_found(st.slug)

    def rotate_key(self, st: Stammtisch) -> tuple[Stammtisch, str]:
        """A new write key for ``st`` (the only time it is seen): the old key stops working
        at once, for the API and the form, and every login made with it ends. Every webhook
        of the Stammtisch is paused with it (one registered with a leaked key would go on
        receiving its events): it gets nothing until someone with the new key resumes it
        (``active: true``) or deletes it; the rotation's answer lists them."""
        token = secrets.token_urlsafe(32)
        with self.writing():
            self.repo.replace_key(st.id, hash_token(token))
            for hook in self.repo.list_webhooks(st.id):
                if hook.active:
                    self.repo.update_webhook(replace(hook, active=False))
        return self.stammtisch(st.slug), token

    def update_stammtisch(self, st: Stammtisch, data: dict[str, Any]) -> Stammtisch:
        changed = replace(
            st,
            rules=rules_of(data["rules"]).to_config() if "rules" in data else st.rules,
            name=st.name if data.get("name", st.name) == st.name else new_name(data["name"]),
            private=data.get("private", st.private),
            odds_shown=data.get("odds_shown", st.odds_shown),
        )
        with self.writing():
            self.repo.update_stammtisch(changed)
        return self.stammtisch(st.slug)


def _matches(st: Stammtisch, token: str | None) -> bool:
    return bool(token) and hmac.compare_digest(hash_token(token or ""), st.token_hash)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks about a Stammtisch: the Stammtisch of the slug (None: no such one), the bearer
    token sent and whether it is the Stammtisch's key. Made once per request (the rate
    limit and the access check share it)."""

    slug: str
    stammtisch: Stammtisch | None
    token: str | None
    keyed: bool

    def readable(self) -> Stammtisch:
        """Reads are public; a private Stammtisch without its key is the 404 of an unknown
        slug (it does not show that it exists)."""
        st = self.stammtisch
        if st is None or (st.private and not self.keyed):
            raise _not_found(self.slug)
        return st

    def writable(self) -> Stammtisch:
        """A write needs the Stammtisch's key: none is a 401, another's a 403 (a private
        Stammtisch: the 404 of an unknown slug)."""
        st = self.readable()
        _authorize(self.token, self.keyed)
        return st


def _authorize(token: str | None, keyed: bool) -> None:
    if not token:
        raise Unauthorized("Dafür braucht es den Schlüssel des Stammtischs (Bearer-Token).")
    if not keyed:
        raise Forbidden("Dieser Schlüssel gehört nicht zu diesem Stammtisch.")


def _not_found(slug: str) -> NotFound:
    return NotFound(f"Keinen Stammtisch „{slug}“ gefunden.", code="stammtisch_not_found")
