"""Games of a Stammtisch: start, list, read; record turns, throws, penalties; undo; export."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, g
from flask.views import MethodView
from werkzeug.sansio.response import Response

from schemas import (
    GameListQuerySchema,
    GameListSchema,
    GameLogSchema,
    GameSchema,
    GameStartSchema,
    PenaltyRequestSchema,
    ThrowRequestSchema,
    TurnRequestSchema,
    UndoRecordSchema,
    UndoRequestSchema,
    WriteResultSchema,
)

from ..domain import WriteResult
from ..http.context import services
from .access import STAMMTISCH, blueprint, reads, writes

TURN_RULES = """Games: two halves (Hälften), maybe a Finale; recorded turn by turn or throw by \
throw. Every write returns the new state and the domain events it caused.

**Turn-closing rules.** Every game answer carries `turn` (null once the game is over): whose \
turn it is (`turn.player`), the round's opener and `turn.limit`, the throws this turn may use: \
while the opener throws, their cap `options.max_throws` (`limit_fixed` false); afterwards the \
number of throws the opener used (`limit_fixed` true, also `outcome.state.limit`).

A turn recorded throw by throw (`POST .../throws`) stays open (`open_turn`, `turn.open`) until

1. a throw reaches `turn.limit` without setting dice aside or turning sixes, or is blind: the \
turn ends by itself;
2. the player sends `stop: true`, with their last throw or alone (without dice);
3. another player's throw or whole turn arrives: the open turn ends first, with its throws so \
far, then the new entry is recorded (if either is refused, nothing changes).

Way 3 is impossible when, ended as it stands, the turn would end the game or the same player \
would throw next (e.g. they would lose the round and so open the next one, the next half or \
the Finale; under `next_starter: last_receiver` the last to receive Deckel opens). Then \
`turn.must_stop` is true and the client **must** send `stop` when the player is done: their \
next throw would count as a further throw of the open turn, and a whole turn of theirs is \
refused with 409. The \
server decides it by ending the turn on a copy of the game, so a client needs no tie rules. \
When `must_stop` is false, `stop` is optional; it is always accepted while \
`turn.open.can_stop` is true. After turning sixes `can_stop` is false: the player must throw \
again (stop and other players' entries get 409).

While a turn is open, a penalty is refused with 409 (send `stop` first, then the penalty), \
and so is a whole turn by the open turn's own player; `undo` removes its last throw."""

blp = blueprint(__name__, f"{STAMMTISCH}/games", TURN_RULES)


F = TypeVar("F", bound=Callable[..., Any])


def _entry(schema: Any, operation: str, required: bool = True) -> Callable[[F], F]:
    """A write that records an entry (a turn, a throw, a penalty, an undo): the Stammtisch's
    token first, then the body (``schema``), 201 with the write result, its error answers."""

    def wrap(func: F) -> F:
        func = blp.response(201, WriteResultSchema)(func)
        return writes(blp, operation, 409)(blp.arguments(schema, required=required)(func))

    return wrap


@blp.route("")
class Games(MethodView):
    @reads(blp, "listGames")
    @blp.arguments(GameListQuerySchema, location="query")
    @blp.response(200, GameListSchema)
    def get(self, query: dict[str, Any], slug: str) -> dict[str, Any]:
        """List games, newest first (filter by year, status, player; paginated)"""
        svc = services()
        return svc.games(g.stammtisch, query)

    @writes(blp, "startGame", 409)
    @blp.arguments(GameStartSchema)
    @blp.response(201, GameSchema)
    def post(self, data: dict[str, Any], slug: str) -> dict[str, Any]:
        """Start a game

        Players in seat order, the first starter, when it is played, and house rules
        (default: the Stammtisch's), stored expanded with the game."""
        return _shown(services().start_game(g.stammtisch, data).to_dict())


@blp.route("/<id:game_id>")
class GameItem(MethodView):
    @reads(blp, "getGame")
    @blp.response(200, GameSchema)
    def get(self, slug: str, game_id: int) -> dict[str, Any]:
        """Read the full state of a game

        Phase, Mitte, stacks, active players, the current round's turns, every resolved
        round, half losers, Finale, Blattschuss, loser; and the turn state (turn): whose turn,
        the round's opener and throw limit, the open turn, whether stop is needed."""
        return _shown(services().game(g.stammtisch, game_id).to_dict())


def _shown(body: dict[str, Any]) -> dict[str, Any]:
    """Note the game version an answer shows, for its ETag (``api/idempotency.py``)."""
    g.game_seq = (body["game"] if "game" in body else body)["seq"]
    return body


def _written(result: WriteResult) -> Response:
    """The 201 of a recorded entry, its JSON-ready state sent as it is: ``WriteResultSchema``
    dumps it unchanged (tests/test_api_games.py checks that on every kind of answer), and the
    dump cost a third of a turn's CPU in the profile of a recorded turn."""
    response = current_app.json.response(_shown(result.to_dict()))
    response.status_code = 201
    return response


def _write(slug: str, game_id: int, kind: str, body: dict[str, Any]) -> Response:
    return _written(services().record(g.stammtisch, game_id, kind, body))


@blp.route("/<id:game_id>/turns")
class Turns(MethodView):
    @_entry(TurnRequestSchema, "recordTurn")
    def post(self, data: dict[str, Any], slug: str, game_id: int) -> Response:
        """Record a whole turn (summary or in detail)

        409 when the rules forbid it, e.g. „In dieser Runde ist höchstens 1 Wurf erlaubt“, or
        when it is the turn of a player whose throw-by-throw turn is still open (stop first).
        A whole turn by the next player ends another player's open turn (turn-closing rules
        in the games tag)."""
        return _write(slug, game_id, "turn", data)


@blp.route("/<id:game_id>/throws")
class Throws(MethodView):
    @_entry(ThrowRequestSchema, "recordThrow")
    def post(self, data: dict[str, Any], slug: str, game_id: int) -> Response:
        """Record a single throw (throw-by-throw clients)

        A turn stays open until it reaches turn.limit, is blind, the player sends stop, or
        another player's entry arrives; stop is required when turn.must_stop is true. The
        turn-closing rules are in the description of the games tag."""
        return _write(slug, game_id, "throw", data)


@blp.route("/<id:game_id>/penalties")
class Penalties(MethodView):
    @_entry(PenaltyRequestSchema, "recordPenalty")
    def post(self, data: dict[str, Any], slug: str, game_id: int) -> Response:
        """Record a penalty (Strafdeckel)

        409 while a throw-by-throw turn is open (open_turn not null): end it with stop first,
        then record the penalty."""
        return _write(slug, game_id, "penalty", {"penalty": data})


@blp.route("/<id:game_id>/undo")
class Undo(MethodView):
    @_entry(UndoRequestSchema, "undoLastEntry", required=False)
    def post(self, data: dict[str, Any], slug: str, game_id: int) -> Response:
        """Undo the last accepted entry

        The log keeps an audit record (what, by whom, why, when); see .../undos."""
        return _written(services().undo(g.stammtisch, game_id, data or {}))


@blp.route("/<id:game_id>/abandon")
class Abandon(MethodView):
    @writes(blp, "abandonGame", 409)
    @blp.response(200, GameSchema)
    def post(self, slug: str, game_id: int) -> dict[str, Any]:
        """Call a running game off ("Spiel abbrechen")

        The game and its log are kept, its `status` becomes `abandoned`; it takes no more
        entries (409 `game_abandoned`) and is left out of the statistics. A decided game
        cannot be called off (409 `game_finished`). The event streams and webhooks send
        `game_abandoned`."""
        return _shown(services().abandon_game(g.stammtisch, game_id).to_dict())


@blp.route("/<id:game_id>/undos")
class Undos(MethodView):
    @reads(blp, "listUndos")
    @blp.response(200, UndoRecordSchema(many=True))
    def get(self, slug: str, game_id: int) -> list[dict[str, Any]]:
        """Audit records of every undo"""
        svc = services()
        return svc.undo_history(g.stammtisch, game_id)


@blp.route("/<id:game_id>/log")
class Log(MethodView):
    @reads(blp, "exportGameLog")
    @blp.response(200, GameLogSchema)
    def get(self, slug: str, game_id: int) -> dict[str, Any]:
        """Export a game as a game log (schemas/GAMELOG.md v1)

        Importing the export and exporting again gives the identical log. A throw-by-throw
        turn still open is not part of it."""
        svc = services()
        return svc.export(g.stammtisch, game_id)
