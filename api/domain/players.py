"""Players of a Stammtisch: add, rename, retire. Names are unique per Stammtisch; changes
to one Stammtisch's players are serialised by its lock (``-stammtisch id``)."""

from __future__ import annotations

from typing import Any

from ..storage import Player, Stammtisch
from .base import UseCases
from .errors import Conflict, Invalid, NotFound

EMPTY_NAME = "Der Name ist leer."


class PlayerUseCases(UseCases):
    def players(self, st: Stammtisch) -> list[Player]:
        return self.repo.list_players(st.id)

    def _check_free_name(self, st: Stammtisch, name: str, except_id: int | None = None) -> None:
        for p in self.repo.list_players(st.id):
            if p.name == name and p.id != except_id:
                raise Conflict(f"Einen Spieler „{name}“ gibt es an diesem Stammtisch schon.")

    def add_player(self, st: Stammtisch, name: str) -> Player:
        name = name.strip()
        if not name:
            raise Invalid(EMPTY_NAME, field="name")
        with self.cache.locked(-st.id), self.repo.transaction():
            self._check_free_name(st, name)
            return self.repo.add_player(st.id, name, self.clock())

    def player(self, st: Stammtisch, player_id: int) -> Player:
        for p in self.repo.list_players(st.id):
            if p.id == player_id:
                return p
        raise NotFound(f"Keinen Spieler mit der Nummer {player_id} an diesem Stammtisch.")

    def update_player(self, st: Stammtisch, player_id: int, data: dict[str, Any]) -> Player:
        with self.cache.locked(-st.id), self.repo.transaction():
            p = self.player(st, player_id)
            name = data.get("name", p.name).strip()
            if not name:
                raise Invalid(EMPTY_NAME, field="name")
            self._check_free_name(st, name, p.id)
            retired = data.get("retired", p.retired)
            retired_at = (
                p.retired_at if retired == p.retired else (self.clock() if retired else None)
            )
            self.repo.update_player(p.id, name, retired, retired_at)
        return self.player(st, player_id)
