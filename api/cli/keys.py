"""``schocken key rotate <slug>``: a new write key for a Stammtisch.

The old key stops working at once (API and pub form), every login of the pub form made with
it ends, and every webhook of the Stammtisch is paused (listed) until resumed with the new
key; the new key is printed once. For the demo Stammtisch the key kept for the start page
(``demo_key.json`` in the instance folder of its SQLite database) is replaced as well.
"""

from __future__ import annotations

import sys

import click

from .base import Group
from .database import database_url_option

key = Group(
    "key", short_help="the write key of a Stammtisch", help="The write key of a Stammtisch."
)


@key.command("rotate", short_help="a new write key (the old one and its logins end)")
@click.argument("slug")
@click.option("--db", metavar="PATH", help="SQLite database file (default: the server's)")
@database_url_option
def rotate(slug: str, db: str | None, database_url: str | None) -> int:
    """Give the Stammtisch SLUG a new write key and print it (only now visible)."""
    from ..config import instance_folder, instance_path
    from ..domain import GameCache, NotFound, Services
    from ..domain.demo_key import save_demo_key, saved_demo_key
    from .dashboard import _database, _store
    from .database import pick_url

    url = pick_url(database_url, db)
    store = _store(db, database_url)
    if store is None:
        return 1
    repo = store.repository()
    try:
        svc = Services(repo, GameCache(4))
        try:
            st, token = svc.rotate_key(svc.stammtisch(slug))
            webhooks = svc.webhooks(st)
        except NotFound as err:
            print(err.message, file=sys.stderr)
            return 1
    finally:
        repo.close()
        store.close()
    print(f"Neuer Schlüssel für „{st.name}“ ({st.slug}), nur jetzt sichtbar:", file=sys.stderr)
    print(token)
    print(
        "Der alte Schlüssel gilt nicht mehr; alle Anmeldungen damit sind beendet.", file=sys.stderr
    )
    if webhooks:
        print(
            "Pausiert, bis sie mit dem neuen Schlüssel wieder eingeschaltet werden "
            "(PATCH …/webhooks/NR mit active: true; unbekannte löschen):",
            file=sys.stderr,
        )
        for hook in webhooks:
            print(f"  Webhook {hook.id}: {hook.url}", file=sys.stderr)
    if not url:  # the demo's key is kept beside a SQLite database only
        folder = instance_folder(_database(db), instance_path())
        saved = saved_demo_key(folder)
        if saved and saved[0] == st.slug:
            path = save_demo_key(folder, st.slug, token)
            print(f"Auch in {path} (für die Startseite) ersetzt.", file=sys.stderr)
    return 0


COMMANDS = (key,)
