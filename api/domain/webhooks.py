"""Webhooks of a Stammtisch: register a URL for chosen event kinds, change, delete, rotate its
signing secret, read its delivery log, redeliver, ping. Sending is :mod:`.sender`'s.

The outbox is filled by the writes themselves: every stored entry's events go to the webhooks
of its Stammtisch that chose their kind, in the entry's transaction (``append_events`` →
``enqueue_deliveries``): only rows are inserted, so no receiver can block or fail a write.

Signing follows Standard Webhooks (https://www.standardwebhooks.com): the secret is
``whsec_`` + base64 of 32 random bytes, the signature HMAC-SHA256 with those bytes over
``<webhook-id>.<webhook-timestamp>.<body>``, sent base64 as ``webhook-signature: v1,<sig>``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
import secrets
import socket
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..rules import EventKind
from ..storage import Stammtisch
from ..storage.webhook_records import Delivery, Webhook
from .base import UseCases
from .errors import Conflict, Invalid, NotFound

#: the event kinds a webhook may choose (the domain events and the start of a game)
KINDS: tuple[str, ...] = tuple(sorted({k.value for k in EventKind} | {"game_started"}))
#: webhooks per Stammtisch
MAX_WEBHOOKS = 10
#: the longest URL taken
MAX_URL = 2000
#: names of this machine: a receiver there only where loopback is allowed (see check_url)
LOCAL_NAMES = ("localhost", ".localhost")
#: IPv6 prefixes that carry an IPv4 address (IPv4-compatible, NAT64): that one is checked
EMBEDDING = (ipaddress.IPv6Network("::/96"), ipaddress.IPv6Network("64:ff9b::/96"))
#: a host name as a URL may carry it (after IDNA): letters, digits, hyphens, dots
NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$")
#: the prefix of a signing secret
SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """A new signing secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header of a body: ``v1,`` + base64 HMAC-SHA256 with the
    secret's bytes over ``<id>.<timestamp>.<body>``."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def ip_literal(host: str) -> Address | None:
    """The address a URL's host names literally, in every spelling the OS takes (``127.1``,
    ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``::ffff:7f00:1``, ``fe80::1%eth0``); None
    for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").partition("%")[0])
    except ValueError:
        pass
    if not host or not host[0].isdigit() or not host.replace(".", "").isalnum():
        return None  # inet_aton takes "1.2.3.4 anything" too: only digits, dots, hex
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))  # as the C library reads it
    except OSError:
        return None


def public_address(ip: Address, loopback: bool = False) -> bool:
    """May the sender connect to ``ip``? Only addresses in public ranges (``is_global``, not
    multicast); this machine's loopback too when ``loopback`` allows it. An IPv6 address that
    carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by that one."""
    if loopback and ip.is_loopback:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo or (None, None))[1]
        if inner is None and any(ip in net for net in EMBEDDING):
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return public_address(inner, loopback)
    return ip.is_global and not ip.is_multicast


def loopback_allowed(setting: bool | None, hosted: bool, testing: bool = False) -> bool:
    """``WEBHOOK_LOOPBACK``: receivers on this machine's loopback allowed? Unset: yes for the
    embedded SQLite store and for tests, no when hosted on PostgreSQL."""
    return (not hosted or testing) if setting is None else bool(setting)


def check_url(url: str, loopback: bool = False) -> str:
    """A receiver's URL: https:// to a public address or name; with ``loopback`` also
    http:// and https:// to this machine (localhost, 127.0.0.0/8, [::1]). An IP literal outside
    the public ranges is refused in every spelling; no credentials, no fragment. (Where a name
    points is checked by the sender when it connects.)"""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".") if len(url) <= MAX_URL else ""
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        host, parts = "", urlsplit("")
    ip = ip_literal(host)
    local = host == LOCAL_NAMES[0] or host.endswith(LOCAL_NAMES[1])
    local = local or (ip is not None and public_address(ip, True) and not public_address(ip))
    problem = None
    if not host or parts.scheme not in ("https", "http"):
        problem = "Erwartet wird eine vollständige https://-Adresse."
    elif ip is None and not NAME.match(host_ascii(host)):
        problem = f"„{host}“ ist kein gültiger Rechnername."
    elif local and not loopback:
        problem = "Adressen dieses Rechners (localhost, 127.x, [::1]) sind hier nicht erlaubt."
    elif ip is not None and not public_address(ip, loopback):
        problem = "Nur öffentliche Adressen: private, lokale und reservierte Netze sind gesperrt."
    elif parts.scheme == "http" and not local:
        problem = "Nur https://-Adressen (http:// nur für localhost, 127.0.0.1 oder [::1])."
    elif parts.username or parts.password or parts.fragment:
        problem = "Die Adresse darf weder Zugangsdaten noch ein #Fragment enthalten."
    if problem is not None:
        raise Invalid(problem, field="url", code="webhook_url_invalid")
    return url


def host_ascii(host: str) -> str:
    """A host name as DNS spells it (IDNA); "" when it has none."""
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return ""


def check_kinds(kinds: list[str]) -> tuple[str, ...]:
    """The chosen kinds, each once, in the catalogue's order; at least one, all known."""
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        detail = f"Unbekannte Ereignisart: {', '.join(unknown)}." if unknown else ""
        raise Invalid(
            f"{detail} Erlaubt sind: {', '.join(KINDS)}.".strip(),
            field="kinds",
            code="webhook_kinds_invalid",
        )
    return tuple(k for k in KINDS if k in kinds)


class WebhookUseCases(UseCases):
    def webhooks(self, st: Stammtisch) -> list[Webhook]:
        return self.repo.list_webhooks(st.id)

    def webhook(self, st: Stammtisch, webhook_id: int) -> Webhook:
        found = self.repo.get_webhook(st.id, webhook_id)
        if found is None:
            raise NotFound(
                f"Keinen Webhook mit der Nummer {webhook_id} an diesem Stammtisch.",
                code="webhook_not_found",
            )
        return found

    def add_webhook(self, st: Stammtisch, data: dict[str, Any]) -> Webhook:
        url, kinds = check_url(data["url"], self.loopback), check_kinds(data["kinds"])
        with self.writing(-st.id):
            if len(self.repo.list_webhooks(st.id)) >= MAX_WEBHOOKS:
                raise Conflict(
                    f"Ein Stammtisch kann höchstens {MAX_WEBHOOKS} Webhooks haben.",
                    code="too_many_webhooks",
                )
            description = data.get("description", "")
            hook = Webhook(
                0, st.id, url, tuple(kinds), new_secret(), True, description, self.clock()
            )
            return self.repo.add_webhook(hook)

    def update_webhook(self, st: Stammtisch, webhook_id: int, data: dict[str, Any]) -> Webhook:
        with self.writing():
            hook = self.webhook(st, webhook_id)
            changed = replace(
                hook,
                url=check_url(data["url"], self.loopback) if "url" in data else hook.url,
                kinds=check_kinds(data["kinds"]) if "kinds" in data else hook.kinds,
                active=data.get("active", hook.active),
                description=data.get("description", hook.description),
            )
            self.repo.update_webhook(changed)
        return changed

    def rotate_secret(self, st: Stammtisch, webhook_id: int) -> Webhook:
        """A new secret at once: every delivery from now on is signed with it."""
        with self.writing():
            changed = replace(self.webhook(st, webhook_id), secret=new_secret())
            self.repo.update_webhook(changed)
        return changed

    def delete_webhook(self, st: Stammtisch, webhook_id: int) -> None:
        with self.writing():
            self.repo.delete_webhook(self.webhook(st, webhook_id).id)

    def deliveries(
        self, st: Stammtisch, webhook_id: int, page: int, page_size: int
    ) -> tuple[list[Delivery], int]:
        hook = self.webhook(st, webhook_id)
        return self.repo.list_deliveries(hook.id, (page - 1) * page_size, page_size)

    def delivery(self, st: Stammtisch, webhook_id: int, delivery_id: int) -> Delivery:
        found = self.repo.get_delivery(self.webhook(st, webhook_id).id, delivery_id)
        if found is None:
            raise NotFound(
                f"Keine Zustellung {delivery_id} dieses Webhooks.", code="delivery_not_found"
            )
        return found

    def redeliver(self, st: Stammtisch, webhook_id: int, delivery_id: int) -> Delivery:
        """One more attempt, now, with the same idempotency id (whatever its state)."""
        with self.writing():
            found = self.delivery(st, webhook_id, delivery_id)
            self.repo.redeliver(found.id, self.clock())
        return self.delivery(st, webhook_id, delivery_id)

    def ping(self, st: Stammtisch, webhook_id: int) -> Delivery:
        """A test delivery (kind ``ping``), sent like any other."""
        hook = self.webhook(st, webhook_id)
        payload = {
            "kind": "ping",
            "message": f"Testnachricht vom Stammtisch {st.name}.",
            "data": {"webhook_id": hook.id},
        }
        return self.repo.add_ping(hook, payload, self.clock())
