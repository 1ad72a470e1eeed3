"""The role ports of storage (api/storage/ports.py): none over 15 methods, and the repository
port the adapters implement is exactly their union."""

from __future__ import annotations

import inspect

from api.storage import MemoryRepository, Repository, SQLiteRepository
from api.storage.ports import (
    Events,
    GameLog,
    SessionsAndLimits,
    Stammtische,
    Statistics,
    Transactions,
)
from api.storage.webhook_port import WebhooksPort

ROLES = (Transactions, Stammtische, GameLog, Events, Statistics, SessionsAndLimits, WebhooksPort)
MAX_METHODS = 15


def methods(cls: type) -> set[str]:
    """The public methods ``cls`` itself declares."""
    return {n for n, v in vars(cls).items() if not n.startswith("_") and inspect.isfunction(v)}


def test_no_role_port_has_more_than_15_methods():
    sizes = {role.__name__: len(methods(role)) for role in ROLES}
    assert all(size <= MAX_METHODS for size in sizes.values()), sizes
    assert all(
        role.__bases__ in ((object,),) or role.__bases__[0].__name__ == "ABC" for role in ROLES
    )  # fmt: skip  - no role widens another


def test_the_repository_is_the_union_of_the_roles_and_each_method_has_one_role():
    owners: dict[str, list[str]] = {}
    for role in ROLES:
        for name in methods(role):
            owners.setdefault(name, []).append(role.__name__)
    assert {n: o for n, o in owners.items() if len(o) > 1} == {}
    public = {n for n in dir(Repository) if not n.startswith("_")}
    assert public == set(owners)
    assert methods(Repository) <= set(owners)  # a default across roles, no new method
    for adapter in (MemoryRepository, SQLiteRepository):
        assert all(issubclass(adapter, role) for role in ROLES)
