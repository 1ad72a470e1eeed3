"""Derived facts of one game, as rows of the fact tables (shaped for the statistics).

:func:`derive_facts` is a pure function of a :class:`~api.domain.runtime.GameRuntime`; the service
writes its rows in the same transaction as the log entry. :func:`facts_write` compares them
with what was written before and appends only new rows, rewriting a table only when an earlier
row changed (undo, rebuild). Players appear by name (as at the table) and by id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from ..rules import (
    PRESETS,
    Category,
    Game,
    Half,
    PenaltyRecord,
    RecordPenalty,
    evaluation_table,
    parse_dice,
)
from ..storage import FactsWrite, GamePlayer, GameRecord
from ..storage.records import ROW_TABLES
from .runtime import GameRuntime

Rows = dict[str, list[dict[str, Any]]]


class Seating(NamedTuple):
    """What the facts take from the stored game besides its log."""

    game_id: int
    players: tuple[GamePlayer, ...]  # in seat order
    stammtisch_id: int
    year: int  # at the table
    played_local: datetime  # wall-clock time at the table


def seating_of(record: GameRecord) -> Seating:
    return Seating(
        record.id, record.players, record.stammtisch_id, record.year, record.played_local
    )


def derive_facts(seating: Seating, rt: GameRuntime, prev: Rows | None = None) -> Rows:
    """Every fact row of the game. ``prev``: the rows derived before the last entry of the same
    runtime; turns and rounds only grow, so those rows are reused and only new ones built."""
    ids = {p.name: p.player_id for p in seating.players}
    game = rt.game
    turns = _turn_rows(seating.game_id, ids, rt, list(prev["turn_facts"]) if prev else [])
    rounds = _round_rows(seating.game_id, ids, game, list(prev["round_facts"]) if prev else [])
    resolved = len(prev["round_facts"]) if prev else 0  # rounds whose moves are all known
    moves = list(prev["deckel_moves"]) if prev else []
    facts = {
        "game_facts": [_game_row(seating.game_id, ids, game)],
        "turn_facts": turns,
        "round_facts": rounds,
        "deckel_moves": _move_rows(seating.game_id, ids, rt, turns, moves, resolved),
        "half_facts": _half_rows(seating.game_id, ids, game),
    }
    facts["player_game_facts"] = summarize(seating, facts) if game.finished else []
    return facts


def _turn_rows(
    game_id: int, ids: dict[str, int], rt: GameRuntime, turns: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``turns`` (the rows of the turns derived before) plus a row per newer turn."""
    start = len(turns)
    new_turns = zip(rt.game.turns[start:], rt.turn_commands(start), strict=True)
    for n, (fact, (cmd, seq)) in enumerate(new_turns, start=start + 1):
        turns.append(
            {
                "game_id": game_id,
                "turn_no": n,
                "seq": seq,
                "half": fact.half.value,
                "round_no": fact.round + 1,
                "player_id": ids[fact.player],
                "player": fact.player,
                "dice": fact.dice,
                "throws": fact.throws,
                "hand": fact.hand,
                "blind": fact.blind,
                "category": fact.category.value,
                "result_name": fact.name,
                "deckel_value": fact.deckel,
                "rank_key": fact.key,
                "entry": "detail" if cmd.detail is not None else "summary",
            }
        )
    return turns


def _round_rows(
    game_id: int, ids: dict[str, int], game: Game, rounds: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``rounds`` (the rows of the rounds derived before) plus a row per newer round."""
    for i, rec in enumerate(game.rounds[len(rounds) :], start=len(rounds)):
        source = rec.source
        rounds.append(
            {
                "game_id": game_id,
                "round_no": i + 1,
                "half": rec.half.value,
                "starter_id": ids.get(rec.starter),
                "starter": rec.starter,
                "throw_limit": rec.limit,
                "best_id": ids.get(rec.best) if rec.best else None,
                "best": rec.best,
                "worst_id": ids.get(rec.worst) if rec.worst else None,
                "worst": rec.worst,
                "deckel": rec.deckel,
                "source": source,
                "source_player_id": ids.get(source) if source else None,
                "repeated": rec.repeated,
            }
        )
    return rounds


def _move_rows(
    game_id: int,
    ids: dict[str, int],
    rt: GameRuntime,
    turns: list[dict[str, Any]],
    moves: list[dict[str, Any]],
    resolved: int,
) -> list[dict[str, Any]]:
    """Every Deckel move in order: a round's penalties before the round's own move.
    ``moves``: those derived before, when ``resolved`` rounds were resolved; only the moves of
    later rounds can be new (a penalty falls in the round in progress), so the moves of the
    first ``resolved`` rounds are kept and the rest derived again."""
    game = rt.game
    while moves and moves[-1]["round_no"] > resolved:
        moves.pop()
    by_round = _penalties_since(rt, resolved)
    last_seq_of_round: dict[int, int] = {}
    for row in reversed(turns):
        if row["round_no"] - 1 < resolved:
            break
        last_seq_of_round.setdefault(row["round_no"] - 1, row["seq"])
    last_seq = turns[-1]["seq"] if turns else 0

    def move(
        seq: int, half: Half, reason: str, round_no: int | None, to: str, src: str, n: int
    ) -> None:
        moves.append(
            {
                "game_id": game_id,
                "move_no": len(moves) + 1,
                "seq": seq,
                "half": half.value,
                "reason": reason,
                "round_no": round_no,
                "receiver_id": ids[to],
                "receiver": to,
                "source": src,
                "source_player_id": ids.get(src),
                "amount": n,
            }
        )

    for r in range(resolved, len(game.rounds) + 1):
        for p, seq in by_round.get(r, []):
            if p.deckel > 0:
                move(seq, p.half, "penalty", r + 1, p.player, p.source, p.deckel)
        if r < len(game.rounds):
            rec = game.rounds[r]
            if rec.source is not None and rec.worst is not None and rec.deckel > 0:
                seq = last_seq_of_round.get(r, last_seq)
                move(seq, rec.half, "round", r + 1, rec.worst, rec.source, rec.deckel)
    return moves


def _penalties_since(rt: GameRuntime, first: int) -> dict[int, list[tuple[PenaltyRecord, int]]]:
    """The penalties of the rounds from ``first`` on (the game's last ones), each with the seq
    of its entry, by round."""
    game = rt.game
    recent = 0
    for p in reversed(game.penalties):
        if p.round < first:
            break
        recent += 1
    seqs: list[int] = []  # the seqs of the last ``recent`` penalty commands, newest first
    for c, s in zip(reversed(game.commands), reversed(rt.cmd_seqs), strict=True):
        if len(seqs) == recent:
            break
        if isinstance(c, RecordPenalty):
            seqs.append(s)
    by_round: dict[int, list[tuple[PenaltyRecord, int]]] = {}
    penalties = game.penalties[len(game.penalties) - recent :]
    for p, seq in zip(penalties, reversed(seqs), strict=True):
        by_round.setdefault(p.round, []).append((p, seq))
    return by_round


def _half_rows(game_id: int, ids: dict[str, int], game: Game) -> list[dict[str, Any]]:
    """A row per lost half (and the lost Finale)."""
    lost = [*zip((Half.HALF1, Half.HALF2), game.half_losers, strict=False)]
    if game.finale is not None and game.loser is not None:
        lost.append((Half.FINALE, game.loser))
    return [
        {
            "game_id": game_id,
            "half": half.value,
            "loser_id": ids[loser],
            "loser": loser,
            "rounds": sum(1 for r in game.rounds if r.half is half),
        }
        for half, loser in lost
    ]


def _game_row(game_id: int, ids: dict[str, int], game: Game) -> dict[str, Any]:
    finale: list[str | None] = [*game.finale] if game.finale else [None, None]
    return {
        "game_id": game_id,
        "status": "finished" if game.finished else "running",
        "phase": game.phase.value,
        "loser_id": ids.get(game.loser) if game.loser else None,
        "loser": game.loser,
        "blattschuss": game.blattschuss,
        "finalist1_id": ids.get(finale[0]) if finale[0] else None,
        "finalist2_id": ids.get(finale[1]) if finale[1] else None,
    }


def summarize(seating: Seating, facts: Rows) -> list[dict[str, Any]]:
    """The per-player summary of a finished game (table player_game_facts, migration 0003):
    one row per player (by id), from the game's other facts, so that the statistics of a
    Stammtisch-year never read the per-turn tables. This is the one definition of these
    figures.

    A *fair* turn is a single throw nobody chose to keep: three dice from the hand (one throw),
    thrown blind, or forced by a round limit of one on a player who did not open the round.
    Only those compare with the probabilities of one throw; their category is read from the
    dice in the default order (Schock aus, Schock, General, Straße, Zahl)."""
    game = facts["game_facts"][0]
    finalists = {game["finalist1_id"], game["finalist2_id"]} - {None}
    rounds = {r["round_no"]: r for r in facts["round_facts"]}
    rows = []
    for pid in sorted(p.player_id for p in seating.players):
        lost = int(game["loser_id"] == pid)
        deckel = {"half1": 0, "half2": 0, "finale": 0}
        for move in facts["deckel_moves"]:
            if move["receiver_id"] == pid:
                deckel[move["half"]] += move["amount"]
        turns = [
            t for t in facts["turn_facts"] if t["player_id"] == pid and t["round_no"] in rounds
        ]
        fair = [_category(t["dice"]) for t in turns if _fair(t, rounds[t["round_no"]])]
        schock_aus = fair.count(Category.SCHOCK_AUS)
        schock = fair.count(Category.SCHOCK)
        general = fair.count(Category.GENERAL)
        strasse = fair.count(Category.STRASSE)
        rows.append(
            {
                "game_id": seating.game_id,
                "player_id": pid,
                "stammtisch_id": seating.stammtisch_id,
                "year": seating.year,
                "played_local": seating.played_local,
                "lost": lost,
                "finalist": int(pid in finalists),
                "finale_lost": int(pid in finalists and lost == 1),
                "blattschuss": int(bool(game["blattschuss"]) and lost == 1),
                "halves_lost": sum(
                    1
                    for h in facts["half_facts"]
                    if h["loser_id"] == pid and h["half"] in ("half1", "half2")
                ),
                "deckel": sum(deckel.values()),
                "deckel_half1": deckel["half1"],
                "deckel_half2": deckel["half2"],
                "deckel_finale": deckel["finale"],
                "turns": len(turns),
                "schock_aus": sum(1 for t in turns if t["category"] == "schock_aus"),
                "fair_schock_aus": schock_aus,
                "fair_schock": schock,
                "fair_general": general,
                "fair_strasse": strasse,
                "fair_zahl": len(fair) - schock_aus - schock - general - strasse,
            }
        )
    return rows


def _category(dice: str) -> Category:
    """The category of three dice thrown from the hand in the default order (the standard
    rules: no special results, every General and Straße counts)."""
    return evaluation_table(PRESETS["standard"])[(*parse_dice(dice), True)].category


def _fair(turn: dict[str, Any], round_row: dict[str, Any]) -> bool:
    if turn["throws"] != 1 or not turn["hand"] or len(turn["dice"]) != 5:
        return False
    if turn["blind"]:
        return True
    opener = round_row["starter_id"]  # a limit of one forces everybody but the opener
    return round_row["throw_limit"] == 1 and opener is not None and opener != turn["player_id"]


#: the facts of a game stored a moment ago: none yet
NO_FACTS: Rows = {"game_facts": [], **{table: [] for table in ROW_TABLES}}


def facts_write(new: Rows, old: Rows | None) -> FactsWrite:
    """Append what is new; rewrite a table whose earlier rows changed (or every table when
    ``old`` is None: nothing is known of what is stored); the game row only when it changed.
    A game just created has ``NO_FACTS``: all its rows are appended."""
    game_row = new["game_facts"][0]
    unchanged = old is not None and old["game_facts"] == [game_row]
    write = FactsWrite(game=None if unchanged else game_row)
    for table in ROW_TABLES:
        rows = new[table]
        before = None if old is None else old[table]
        if before is not None and rows[: len(before)] == before:
            if len(rows) > len(before):
                write.append[table] = rows[len(before) :]
        else:
            write.replace[table] = rows
    return write
