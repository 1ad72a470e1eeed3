"""The catalogue of error codes: every ``code`` an error answer of the API can carry.

One place for the codes of the engine's errors (``api/rules``: ``code=`` at the raise sites),
the use cases' errors (:mod:`api.domain.errors`) and the HTTP layer's own answers; each with
the HTTP status it usually comes with and its short German title (RFC 9457 ``title``).
The answer's shape is :mod:`api.http.problems`. A code, once published, never changes
meaning; new ones may be added.

The status rule (README, openapi.yaml's description): **422** when the request is malformed
whatever the game's state (schema, types, ranges, a dice count or a number of throws the
game's house rules never allow, a request that contradicts itself); **409** when it is
well-formed but the rules forbid it in the game's current state (not this player's turn, more
throws than the opener allowed in this round, a game already over, an open turn).
"""

from __future__ import annotations

#: code → (usual HTTP status, German title): every code the API sends, in one place
CATALOGUE: dict[str, tuple[int, str]] = {
    # HTTP and framework
    "bad_request": (400, "Ungültige Anfrage"),
    "unauthorized": (401, "Schlüssel fehlt"),
    "forbidden": (403, "Falscher Schlüssel"),
    "not_found": (404, "Nicht gefunden"),
    "method_not_allowed": (405, "Methode nicht erlaubt"),
    "precondition_failed": (412, "Spiel inzwischen weitergeführt"),
    "payload_too_large": (413, "Anfrage zu groß"),
    "unsupported_media_type": (415, "Kein JSON"),
    "validation_failed": (422, "Ungültige Eingabe"),
    "idempotency_key_invalid": (422, "Ungültiger Idempotency-Key"),
    "idempotency_key_reused": (422, "Idempotency-Key schon benutzt"),
    "rate_limited": (429, "Zu viele Anfragen"),
    "internal_error": (500, "Interner Fehler"),
    "storage_unavailable": (503, "Datenbank kann nicht schreiben"),
    "database_unreachable": (503, "Datenbank nicht erreichbar"),
    "too_many_streams": (503, "Zu viele Live-Verbindungen"),
    "too_many_client_streams": (429, "Zu viele Live-Verbindungen von dieser Adresse"),
    "uri_too_long": (414, "Adresse zu lang"),
    "header_fields_too_large": (431, "Kopfzeilen zu groß"),
    "http_error": (400, "HTTP-Fehler"),
    # use cases (api/domain)
    "conflict": (409, "Konflikt"),
    "concurrent_change": (409, "Gleichzeitig geändert"),
    "name_taken": (409, "Name schon vergeben"),
    "player_retired": (409, "Spieler nicht mehr aktiv"),
    "nothing_to_undo": (409, "Nichts rückgängig zu machen"),
    "game_abandoned": (409, "Spiel abgebrochen"),
    "nothing_to_back_up": (409, "Nichts zu sichern"),
    "stammtisch_not_found": (404, "Stammtisch nicht gefunden"),
    "player_not_found": (404, "Spieler nicht gefunden"),
    "game_not_found": (404, "Spiel nicht gefunden"),
    "preset_not_found": (404, "Regelwerk nicht gefunden"),
    "invalid_request": (422, "Ungültige Eingabe"),
    "invalid_name": (422, "Ungültiger Name"),
    "invalid_text": (422, "Ungültiger Text"),
    # webhooks (api/domain/webhooks.py)
    "webhook_not_found": (404, "Webhook nicht gefunden"),
    "delivery_not_found": (404, "Zustellung nicht gefunden"),
    "webhook_url_invalid": (422, "Ungültige Webhook-Adresse"),
    "webhook_kinds_invalid": (422, "Unbekannte Ereignisart"),
    "too_many_webhooks": (409, "Zu viele Webhooks"),
    # the rules engine (api/rules): malformed whatever the game state → 422
    "invalid_input": (422, "Ungültige Eingabe"),
    "invalid_rules": (422, "Ungültige Hausregeln"),
    "invalid_dice": (422, "Ungültige Würfel"),
    "dice_count_wrong": (422, "Falsche Zahl von Würfeln"),
    "detail_inconsistent": (422, "Würfe widersprechen sich"),
    "throws_over_house_limit": (422, "Mehr Würfe als die Hausregeln erlauben"),
    "unknown_player": (422, "Spielt nicht mit"),
    "throws_invalid": (422, "Ungültige Zahl von Würfen"),
    "house_rule_forbids": (422, "Nach den Hausregeln nicht erlaubt"),
    "unknown_field": (422, "Unbekanntes Feld"),
    "missing_field": (422, "Feld fehlt"),
    # the rules engine: forbidden in this game state → 409
    "rule_violation": (409, "Regelverstoß"),
    "game_finished": (409, "Spiel schon vorbei"),
    "player_out": (409, "Spieler schon raus"),
    "turn_not_yours": (409, "Nicht an der Reihe"),
    "throw_limit_exceeded": (409, "Zu viele Würfe in dieser Runde"),
    "turn_open": (409, "Offener Zug"),
    "no_open_turn": (409, "Kein offener Zug"),
    "cup_mismatch": (409, "Würfel passen nicht zum Becher"),
    "round_lost_already": (409, "Runde schon verloren"),
}

#: the code of an HTTP status when nothing more specific is known
BY_STATUS: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "rate_limited",
    431: "header_fields_too_large",
    500: "internal_error",
    503: "storage_unavailable",
}

#: detail of the framework's own answers that carry no message of ours
DEFAULT_DETAIL: dict[str, str] = {
    "bad_request": "Die Anfrage ist nicht verständlich.",
    "not_found": "Diese Adresse gibt es nicht.",
    "method_not_allowed": "Diese Methode ist hier nicht erlaubt (erlaubt: siehe Allow).",
    "payload_too_large": "Die Anfrage ist zu groß.",
    "uri_too_long": "Die Adresse der Anfrage ist zu lang.",
    "header_fields_too_large": "Die Kopfzeilen der Anfrage sind zu groß oder zu viele.",
    "unsupported_media_type": "Erwartet wird JSON (Content-Type: application/json).",
    "validation_failed": "Ungültige Eingabe: die Felder stehen unter errors.",
    "internal_error": "Interner Fehler; der Eintrag wurde nicht gespeichert.",
}
