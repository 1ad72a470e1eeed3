"""``POST /api/v1/admin/backup``: a consistent backup through the running server.

``schocken backup DIR`` copies the SQLite file beside the server without it; this endpoint
does the same inside the server, for a machine that reaches the server only over HTTP: with
the admin token (``ADMIN_TOKEN`` / ``SCHOCKEN_ADMIN_TOKEN``, else generated once into
``<instance>/admin_token``, readable only by its owner) the backup folder (api/domain/backup.py:
the database copied into ``schocken.sqlite3`` in one consistent moment, SQLite or PostgreSQL,
and the game logs) is written into a
temporary folder and sent as a ``.tar.gz``. A Stammtisch's token is not enough: a backup holds
every Stammtisch's data. :func:`register` adds the blueprint and its security scheme.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from flask import Response, current_app, send_file
from flask.views import MethodView
from flask_smorest import Api

from ..domain import Conflict
from ..domain.backup import backup_folder, tar_folder
from ..http.context import check_admin
from ..storage import MemoryStore
from .access import blueprint

blp = blueprint(
    __name__, "/admin", "Server administration: a consistent backup while the server runs."
)

ADMIN_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": "The server's admin token (ADMIN_TOKEN or <instance>/admin_token).",
}


@blp.route("/backup")
class Backup(MethodView):
    @blp.response(
        200,
        {"type": "string", "format": "binary"},
        content_type="application/gzip",
        description="The backup folder (the database as a SQLite file, game logs) as .tar.gz.",
    )
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(security=[{"adminToken": []}], operationId="backupDatabase")
    def post(self) -> Response:
        """Back up the whole database (admin token)

        A copy of the database as a SQLite file (of SQLite: its online backup; of PostgreSQL:
        every table read in one snapshot; either way one consistent moment while the servers
        go on writing) plus every game as a game log; what
        `schocken backup --server URL DIR` fetches and `schocken import DIR` restores."""
        check_admin()
        store = current_app.extensions["schocken"].store
        if isinstance(store, MemoryStore):
            raise Conflict(
                "Ein Server ohne Datenbank (nur im Speicher) hat nichts zu sichern.",
                code="nothing_to_back_up",
            )
        with tempfile.TemporaryDirectory(prefix="schocken-backup-") as tmp:
            backup_folder(store, Path(tmp) / "export")
            data = tar_folder(Path(tmp) / "export")
        return send_file(
            io.BytesIO(data),
            mimetype="application/gzip",
            as_attachment=True,
            download_name="schocken-backup.tar.gz",
        )


def register(api: Api) -> None:
    """Add the admin token's security scheme and the blueprint to the OpenAPI document."""
    api.spec.components.security_scheme("adminToken", dict(ADMIN_SCHEME))
    api.register_blueprint(blp)
