"""A Stammtisch: a group of regulars with players, house rules, games and statistics."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.domain.stammtische import NAME_MAX, ODDS_SHOWN, SLUG_PATTERN, SLUG_RULE

from .common import PRINTABLE, Bool, UtcDateTime, doc, list_of, opt, req
from .rules import RulesConfigSchema
from .webhooks import WebhookSchema

SLUG = validate.Regexp(f"^{SLUG_PATTERN}$", error=SLUG_RULE)
NAME = [validate.Length(min=1, max=NAME_MAX), PRINTABLE]
ODDS_SHOWN_DOC = (
    'Where the odds of a throw ("Chancen": the best decisions with their probability of '
    "beating the round's worst result, POST /rules/odds) are shown: `off` nowhere (some "
    "tables call it cheating), `form` in the pub form's throw-by-throw input, `form_and_tv` "
    "there and on the TV page. A display setting, not a house rule: rulesets and game logs "
    "do not name it."
)


def odds_field(description: str, **kwargs: object) -> fields.String:
    return opt(fields.String, description, "form", validate=validate.OneOf(ODDS_SHOWN), **kwargs)


class StammtischCreateSchema(Schema):
    name = req(
        fields.String,
        "Display name of the Stammtisch (a group of regulars that plays together).",
        "Knobelrunde Zur Post",
        validate=NAME,
    )
    slug = opt(
        fields.String,
        "URL name; lowercase letters, digits, hyphens. Derived from the name when missing.",
        "zur-post",
        validate=SLUG,
    )
    rules = fields.Nested(
        RulesConfigSchema,
        load_default=lambda: {"preset": "standard", "overrides": {}},
        metadata=doc(
            "House rules for games started later (default: standard preset).",
            {"preset": "standard", "overrides": {"deckel": 15}},
        ),
    )
    private = opt(
        Bool,
        "Statistics and games readable only with the token; without it a private "
        "Stammtisch answers 404, as if it did not exist. Default false: public, i.e. its "
        "games and statistics are readable by anyone and it is listed on the public "
        "dashboard at once (the pub form asks when a Stammtisch is created).",
        False,
        load_default=False,
    )
    odds_shown = odds_field(f"{ODDS_SHOWN_DOC} Default `off`.", load_default="off")


class StammtischUpdateSchema(Schema):
    name = opt(fields.String, "New display name.", "Knobelrunde Post", validate=NAME)
    rules = fields.Nested(
        RulesConfigSchema,
        metadata=doc(
            "New house rules; they apply only to games started afterwards.",
            {"preset": "wolbeck", "overrides": {}},
        ),
    )
    private = opt(Bool, "Make statistics private or public.", True)
    odds_shown = odds_field(ODDS_SHOWN_DOC)


class StammtischSchema(Schema):
    slug = req(fields.String, "URL name.", "zur-post")
    name = req(fields.String, "Display name.", "Knobelrunde Zur Post")
    rules = fields.Nested(
        RulesConfigSchema,
        required=True,
        metadata=doc("Current house rules.", {"preset": "standard", "overrides": {}}),
    )
    private = req(Bool, "Reads need the token.", False)
    odds_shown = req(fields.String, ODDS_SHOWN_DOC, "off", validate=validate.OneOf(ODDS_SHOWN))
    created_at = req(UtcDateTime, "When it was created (UTC).", "2026-11-27T19:00:00+00:00")


class StammtischCreatedSchema(StammtischSchema):
    token = req(
        fields.String,
        "Secret write token, shown only in this response (stored as a hash). Send it as "
        "'Authorization: Bearer <token>' with every write.",
        "q3Vb2m1tXo0Kf8r0Yw1a6JxH0J4sQf9e3cQxkq1lZ2A",
    )


class StammtischKeySchema(StammtischCreatedSchema):
    webhooks = list_of(
        WebhookSchema,
        "The Stammtisch's webhooks, all paused by the rotation (`active: false`): one "
        "registered with a leaked key would go on receiving the events. Resume each you "
        "know with the new token (`PATCH …/webhooks/ID` with `active: true`), delete the "
        "others. Events of the pause are not delivered; deliveries pending before it are, "
        "once resumed.",
    )
