"""The storage port's contract, differential: random sequences of writes go to the in-memory
fake and to SQLite side by side: every step answers alike, and at the end everything the port
reads back is the same on both (the answers, the conflicts, the lists, filters and pages, the facts, the events
and the stale marks). A difference is a bug of the fake (or of the adapter)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from storage_contract import NOW, game_row, new_game, turn_row

from api.storage import FactsWrite, LogEntry, MemoryStore, StorageConflict
from api.storage.records import GameQuery, Stammtisch

NAMES = ["Anna", "Bert", "Clara"]
#: the steps every example starts with: two Stammtische with players, games of one moment
PROLOGUE = [("stammtisch", "a"), ("stammtisch", "b"), ("player", 0, "Anna"), ("player", 0, "Bert"),
            ("player", 1, "Clara"), ("game", 0, 2025, 1), ("game", 0, 2025, 1)]  # fmt: skip

step = st.one_of(
    st.tuples(st.just("stammtisch"), st.sampled_from(["a", "b"])),
    st.tuples(st.just("player"), st.integers(0, 2), st.sampled_from(NAMES)),
    st.tuples(st.just("retire"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("rename"), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("game"), st.integers(0, 2), st.integers(2025, 2026), st.integers(1, 2)),
    st.tuples(st.just("append"), st.integers(0, 5), st.integers(1, 3)),
    st.tuples(
        st.just("facts"),
        st.integers(0, 5),
        st.sampled_from(["running", "finished"]),
        st.integers(0, 2),
        st.booleans(),
    ),  # fmt: skip
    st.tuples(st.just("abandon"), st.integers(0, 5)),
    st.tuples(st.just("events"), st.integers(0, 5), st.integers(0, 3)),
)


def apply(repo: Any, action: tuple[Any, ...]) -> Any:
    """One write; its answer (a conflict counts as one)."""
    kind, *args = action
    sts = [repo.get_stammtisch(s) for s in ("a", "b")]
    sts = [s for s in sts if s is not None]
    games = repo.game_ids()
    try:
        if kind == "stammtisch":
            new = Stammtisch(0, args[0], args[0].upper(), {"preset": "standard"}, False, "h", NOW)
            return repo.add_stammtisch(new)
        if kind == "rename" and sts:
            s = sts[args[0] % len(sts)]
            return repo.update_stammtisch(replace(s, name=s.name + "!", private=args[1]))
        if kind == "player" and sts:
            return repo.add_player(sts[args[0] % len(sts)].id, args[1], NOW)
        players = [p for s in sts for p in repo.list_players(s.id)]
        if kind == "retire" and players:
            p = players[args[0] % len(players)]
            return repo.update_player(p.id, p.name, args[1], NOW if args[1] else None)
        if kind == "game" and sts:
            s = sts[args[0] % len(sts)]
            seats = [(p.id, p.name) for p in repo.list_players(s.id)][:2] or [(0, "Gast")]
            return repo.add_game(new_game(s.id, args[1], tuple(seats), args[2]))
        if not games:
            return None
        game = games[args[0] % len(games)]
        if kind == "append":
            return repo.append_log(LogEntry(game, args[1], "turn", {"n": args[1]}, NOW))
        if kind == "facts":
            record = repo.get_game_by_id(game)
            summary = [{**turn_row(game, n), "turn_no": n} for n in range(args[2])]
            write = FactsWrite(game=game_row(game, args[1]))
            (write.replace if args[3] else write.append)["turn_facts"] = summary
            if args[1] == "finished":
                write.replace["player_game_facts"] = []
            return repo.write_facts(record.id, write)
        if kind == "abandon":
            return repo.abandon_game(game, NOW)
        if kind == "events":
            record = repo.get_game_by_id(game)
            events = [{"kind": "turn_recorded", "message": "", "data": {"i": i}}
                      for i in range(args[1])]  # fmt: skip
            return repo.append_events(record.stammtisch_id, game, len(repo.load_log(game)),
                                      events, NOW)  # fmt: skip
    except StorageConflict:
        return "conflict"
    return None


def observe(repo: Any) -> dict[str, Any]:
    """Everything the port reads back about the Stammtische a and b."""
    seen: dict[str, Any] = {"games": repo.game_ids(), "stale": repo.stale_stats()}
    for slug in ("a", "b"):
        s = repo.get_stammtisch(slug)
        if s is None:
            continue
        seen[slug] = s
        seen[f"{slug}.players"] = repo.list_players(s.id)
        for year in (None, 2025):
            for status in (None, "running", "finished", "abandoned"):
                for player in [None, *(p.id for p in seen[f"{slug}.players"][:1])]:
                    for offset in (0, 2):
                        query = GameQuery(s.id, year, status, player, offset, limit=2)
                        seen[f"{slug}.games.{year}.{status}.{player}.{offset}"] = repo.list_games(
                            query
                        )
        seen[f"{slug}.events"] = repo.stammtisch_events(s.id, 0, 100)
        seen[f"{slug}.position"] = repo.last_event_position(s.id)
    for game in seen["games"]:
        seen[f"{game}.log"] = repo.load_log(game)
        seen[f"{game}.version"] = repo.game_version(game)
        seen[f"{game}.facts"] = repo.read_facts(game)
        seen[f"{game}.events"] = repo.game_events(game, -1, 100)
    return seen


# no shrinking: each example opens a SQLite file, and a failure shows its steps as they came
@settings(max_examples=10, deadline=None, database=None, phases=[Phase.generate])
@given(steps=st.lists(step, min_size=10, max_size=30))
def test_the_fake_answers_and_reads_as_sqlite_does(sqlite_template, steps):
    fake, (sqlite, finish) = MemoryStore(), sqlite_template.fresh()
    try:
        for action in [*PROLOGUE, *steps]:
            answers = [apply(store.repository(), action) for store in (fake, sqlite)]
            assert answers[0] == answers[1], action
        assert observe(fake.repository()) == observe(sqlite.repository())
    finally:
        finish()
        fake.close()
