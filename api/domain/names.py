"""The engine's text rules (:mod:`api.rules.text`) as the use cases apply them: a new name
normalized or refused, a name compared by its key, a reason refused; each refusal an
:class:`~.errors.Invalid` naming its field."""

from __future__ import annotations

from collections.abc import Iterable

from ..rules import name_key, name_problem, normalize_name, reason_problem
from .errors import Conflict, Invalid


def new_name(name: str, field: str = "name") -> str:
    """``name`` in its normal form, or :class:`Invalid` saying what is wrong with it."""
    normal = normalize_name(name)
    problem = name_problem(normal)
    if problem is not None:
        raise Invalid(problem, field=field, code="invalid_name")
    return normal


def check_free(name: str, taken: Iterable[str]) -> None:
    """:class:`Conflict` when ``name`` is, by its key, one of the names ``taken``."""
    key = name_key(name)
    for other in taken:
        if name_key(other) == key:
            same = "" if other == name else f" (als „{other}“)"
            raise Conflict(
                f"Einen Spieler „{name}“ gibt es an diesem Stammtisch schon{same}.",
                field="name",
                code="name_taken",
            )


def check_reason(text: object, field: str = "reason") -> None:
    """:class:`Invalid` when a reason (or an undoer's name) is not one line of visible text."""
    if isinstance(text, str):
        problem = reason_problem(text)
        if problem is not None:
            raise Invalid(problem, field=field, code="invalid_text")


__all__ = ["check_free", "check_reason", "new_name"]
