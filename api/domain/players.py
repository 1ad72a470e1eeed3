"""Players of a Stammtisch: add, rename, retire. Names are unique per Stammtisch; changes
to one Stammtisch's players are serialised by its lock (``-stammtisch id``)."""

from __future__ import annotations

from typing import Any

from ..storage import Player, Stammtisch
from .base import UseCases
from .errors import NotFound
from .names import check_free, new_name


class PlayerUseCases(UseCases):
    def players(self, st: Stammtisch) -> list[Player]:
        return self.repo.list_players(st.id)

    def _check_free_name(self, st: Stammtisch, name: str, except_id: int | None = None) -> None:
        """Names compare by their key (normal form, case, look-alike letters)."""
        check_free(name, (p.name for p in self.repo.list_players(st.id) if p.id != except_id))

    def add_player(self, st: Stammtisch, name: str) -> Player:
        name = new_name(name)
        with self.writing(-st.id):
            self._check_free_name(st, name)
            return self.repo.add_player(st.id, name, self.clock())

    def player(self, st: Stammtisch, player_id: int) -> Player:
        for p in self.repo.list_players(st.id):
            if p.id == player_id:
                return p
        raise NotFound(
            f"Keinen Spieler mit der Nummer {player_id} an diesem Stammtisch.",
            code="player_not_found",
        )

    def update_player(self, st: Stammtisch, player_id: int, data: dict[str, Any]) -> Player:
        with self.writing(-st.id):
            p = self.player(st, player_id)
            name = p.name
            if data.get("name", p.name) != p.name:  # a name kept as it is stays (even an old one)
                name = new_name(data["name"])
                self._check_free_name(st, name, p.id)
            retired = data.get("retired", p.retired)
            retired_at = (
                p.retired_at if retired == p.retired else (self.clock() if retired else None)
            )
            self.repo.update_player(p.id, name, retired, retired_at)
        return self.player(st, player_id)
