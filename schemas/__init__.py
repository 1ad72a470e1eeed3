"""The HTTP contract: marshmallow schemas, split by direction (request / response).

No Flask imports here. Schemas check the *shape* of input; the rules engine checks whether a
move is legal. Every field carries a description and an example; German domain terms
(Stammtisch, Deckel, Mitte, Hälfte, Finale, Blattschuss) are explained where they appear.

marshmallow's own messages are German (:mod:`.german`, set here before any schema exists).
"""

# ruff: noqa: E402  (the German messages first: a field takes its messages when it is made)
from .german import use_german

use_german()

from .common import ErrorSchema, HealthSchema
from .events import DomainEventSchema
from .game_state import GameListSchema, GameSchema, UndoRecordSchema, WriteResultSchema
from .games import (
    GameListQuerySchema,
    GameLogSchema,
    GameStartSchema,
    PenaltyRequestSchema,
    ThrowRequestSchema,
    TurnRequestSchema,
    UndoRequestSchema,
)
from .players import PlayerCreateSchema, PlayerSchema, PlayerUpdateSchema
from .rules import (
    EvaluateRequestSchema,
    EvaluationSchema,
    OddsRequestSchema,
    OddsSchema,
    PresetSchema,
    RulesConfigSchema,
)
from .stammtische import (
    StammtischCreatedSchema,
    StammtischCreateSchema,
    StammtischKeySchema,
    StammtischSchema,
    StammtischUpdateSchema,
)

__all__ = [
    "DomainEventSchema",
    "ErrorSchema",
    "EvaluateRequestSchema",
    "EvaluationSchema",
    "OddsRequestSchema",
    "OddsSchema",
    "GameListQuerySchema",
    "GameListSchema",
    "GameLogSchema",
    "GameSchema",
    "GameStartSchema",
    "HealthSchema",
    "PenaltyRequestSchema",
    "PlayerCreateSchema",
    "PlayerSchema",
    "PlayerUpdateSchema",
    "PresetSchema",
    "RulesConfigSchema",
    "StammtischCreateSchema",
    "StammtischCreatedSchema",
    "StammtischKeySchema",
    "StammtischSchema",
    "StammtischUpdateSchema",
    "ThrowRequestSchema",
    "TurnRequestSchema",
    "UndoRecordSchema",
    "UndoRequestSchema",
    "WriteResultSchema",
]
