"""marshmallow's messages in German, for every schema of the API (and flask-smorest's own).

marshmallow keeps its messages where its documentation says to change them: each field class
has ``default_error_messages`` (merged along the class hierarchy when a field is made), the
base ``Schema`` has ``error_messages`` ("overrides for default schema-level error messages"),
and each validator has its message templates as class attributes (``Range.message_min``, …;
``error=`` overrides them for one validator). :func:`use_german` sets them once, at the import
of :mod:`schemas`, before any schema or field exists; a field or validator with its own
``error=`` keeps it. :data:`FIELDS` and :data:`VALIDATORS` name every message, so a message
marshmallow adds in a later version shows up in the test (tests/test_schemas_german.py).
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

#: per field class: its own messages (the keys marshmallow defines on that class)
FIELDS: dict[type[fields.Field[Any]], dict[str, str]] = {
    fields.Field: {
        "required": "Pflichtfeld: fehlt.",
        "null": "Darf nicht null sein.",
        "validator_failed": "Ungültiger Wert.",
    },
    fields.Nested: {"type": "Ungültiger Typ."},
    fields.List: {"invalid": "Keine gültige Liste."},
    fields.Tuple: {"invalid": "Kein gültiges Tupel."},
    fields.String: {
        "invalid": "Kein gültiger Text.",
        "invalid_utf8": "Kein gültiger UTF-8-Text.",
    },
    fields.UUID: {"invalid_uuid": "Keine gültige UUID."},
    fields.Number: {"invalid": "Keine gültige Zahl.", "too_large": "Die Zahl ist zu groß."},
    fields.Integer: {"invalid": "Keine gültige ganze Zahl."},
    fields.Float: {"special": "NaN und unendlich sind nicht erlaubt."},
    fields.Decimal: {"special": "NaN und unendlich sind nicht erlaubt."},
    fields.Boolean: {"invalid": "Kein gültiger Wahrheitswert (true oder false)."},
    fields._TemporalField: {
        "invalid": "Keine gültige Zeitangabe ({obj_type}).",
        "invalid_awareness": "Keine gültige Zeitangabe ({awareness} {obj_type}).",
        "format": "„{input}“ lässt sich nicht als {obj_type} schreiben.",
    },
    fields.Date: {
        "invalid": "Kein gültiges Datum.",
        "format": "„{input}“ lässt sich nicht als Datum schreiben.",
    },
    fields.TimeDelta: {
        "invalid": "Keine gültige Zeitspanne.",
        "format": "{input!r} lässt sich nicht als Zeitspanne schreiben.",
    },
    fields.Mapping: {"invalid": "Kein gültiges Objekt."},
    fields.Url: {"invalid": "Keine gültige URL."},
    fields.Email: {"invalid": "Keine gültige E-Mail-Adresse."},
    fields.IP: {"invalid_ip": "Keine gültige IP-Adresse."},
    fields.IPv4: {"invalid_ip": "Keine gültige IPv4-Adresse."},
    fields.IPv6: {"invalid_ip": "Keine gültige IPv6-Adresse."},
    fields.IPInterface: {"invalid_ip_interface": "Keine gültige IP-Schnittstelle."},
    fields.IPv4Interface: {"invalid_ip_interface": "Keine gültige IPv4-Schnittstelle."},
    fields.IPv6Interface: {"invalid_ip_interface": "Keine gültige IPv6-Schnittstelle."},
    fields.Enum: {"unknown": "Erlaubt: {choices}."},
}

#: the schema-level messages
SCHEMA = {"type": "Ungültiger Eingabetyp.", "unknown": "Unbekanntes Feld."}

#: per validator class: its message attributes
VALIDATORS: dict[type[validate.Validator], dict[str, str]] = {
    validate.URL: {"default_message": "Keine gültige URL."},
    validate.Email: {"default_message": "Keine gültige E-Mail-Adresse."},
    validate.Range: {
        "message_min": "Muss {min_op} {{min}} sein.",
        "message_max": "Muss {max_op} {{max}} sein.",
        "message_all": "Muss {min_op} {{min}} und {max_op} {{max}} sein.",
        "message_gte": "mindestens",
        "message_gt": "größer als",
        "message_lte": "höchstens",
        "message_lt": "kleiner als",
    },
    validate.Length: {
        "message_min": "Zu kurz: mindestens {min}.",
        "message_max": "Zu lang: höchstens {max}.",
        "message_all": "Die Länge muss zwischen {min} und {max} liegen.",
        "message_equal": "Die Länge muss {equal} sein.",
    },
    validate.Equal: {"default_message": "Muss {other} sein."},
    validate.Regexp: {"default_message": "Entspricht nicht dem erwarteten Muster."},
    validate.Predicate: {"default_message": "Ungültige Eingabe."},
    validate.NoneOf: {"default_message": "Ungültige Eingabe."},
    validate.OneOf: {"default_message": "Erlaubt: {choices}."},
    validate.ContainsOnly: {
        "default_message": "Nicht alles davon ist erlaubt; erlaubt: {choices}."
    },
    validate.ContainsNoneOf: {"default_message": "Darunter ist Verbotenes: {values}."},
}


def use_german() -> None:
    """Set the German messages on marshmallow's classes (idempotent)."""
    for field_class, messages in FIELDS.items():
        own: dict[str, Any] = dict(field_class.__dict__.get("default_error_messages", {}))
        field_class.default_error_messages = {**own, **messages}
    Schema.error_messages = {**Schema.error_messages, **SCHEMA}
    for validator_class, attributes in VALIDATORS.items():
        for name, text in attributes.items():
            setattr(validator_class, name, text)
