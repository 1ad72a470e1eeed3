"""The engine's exception taxonomy.

Every error the engine raises derives from :class:`SchockenError`. Two kinds matter to callers:

* :class:`MalformedInput` — the input is wrong whatever the game's state: it cannot be
  understood (wrong types, pips outside 1–6, an unknown house-rule option), contradicts
  itself (a detail throwing dice it set aside), or is never right in this game (more throws
  or other dice than its house rules allow, a player not in it). The API maps it to HTTP 422.
* :class:`RuleViolation` — the input is well-formed but the rules forbid it *now*, in this
  state of the game (wrong player, more throws than the round's opener allowed, a throw that
  does not fit the open turn's cup, a turn after the game ended). HTTP 409.

Each error has a ``code``: a stable snake_case name of the mistake (``turn_not_yours``,
``throw_limit_exceeded``, …), catalogued with a German title in ``api/domain/problems.py``.

Messages are German sentences a player understands; they quote the offending input.
"""

from __future__ import annotations


class CodedError(Exception):
    """An error a player is told about: a German ``message``, the input ``field`` it is about
    (if any) and ``code``, a stable, machine-readable name of the mistake (snake_case,
    catalogued in ``api/domain/problems.py``); without one, the kind's ``default_code``.

    The base of the engine's errors and of the use cases' (:class:`api.domain.DomainError`)."""

    default_code = "invalid_input"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.code = code or self.default_code


class SchockenError(CodedError):
    """Base class of every error raised by the rules engine."""

    def at_event(self, index: int) -> SchockenError:
        """The same error, its message prefixed with the index of the event in a game log."""
        err = type(self)(f"event {index}: {self.message}", field=self.field, code=self.code)
        err.__cause__ = self
        return err


class MalformedInput(SchockenError):
    """The input cannot be understood: wrong shape, type or value range."""

    default_code = "invalid_input"


class InvalidRules(MalformedInput):
    """A house-rule option or value that does not exist, or options that contradict each other."""

    default_code = "invalid_rules"


class RuleViolation(SchockenError):
    """Well-formed input that the rules of Schocken forbid at this point of the game."""

    default_code = "rule_violation"
