"""The ordering of extension registrations of the participant source registry (D-32)."""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import replace
from typing import Any, Protocol, TypeVar


class Registration(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def order(self) -> int: ...

    @property
    def depends_on(self) -> tuple[str, ...]: ...


R = TypeVar("R", bound=Registration)


def order_registrations(
    registrations: Iterable[R],
    *,
    error: type[Exception],
    noun: str,
    reserved_ids: Set[str] = frozenset(),
    **overrides: Any,
) -> list[R]:
    """Ids case-normalized and unique (not among `reserved_ids`, which count as already placed);
    unknown dependencies and cycles raise `error`; order by dependencies, then `order`, then id."""
    pending: dict[str, R] = {}
    for registration in registrations:
        rid = registration.id.strip().lower()
        if not rid or rid in reserved_ids or rid in pending:
            raise error(f"participant {noun} ids must be non-empty and unique")
        depends_on = tuple(d.strip().lower() for d in registration.depends_on)
        pending[rid] = replace(registration, id=rid, depends_on=depends_on, **overrides)  # type: ignore[type-var]
    known = set(pending) | set(reserved_ids)
    if any(dep not in known for r in pending.values() for dep in r.depends_on):
        raise error(f"a participant {noun} depends on an unknown {noun}")
    ordered: list[R] = []
    placed = set(reserved_ids)
    while pending:
        ready = [r for r in pending.values() if all(d in placed for d in r.depends_on)]
        if not ready:
            raise error(f"participant {noun} dependencies form a cycle")
        chosen = min(ready, key=lambda r: (r.order, r.id))
        ordered.append(chosen)
        placed.add(chosen.id)
        del pending[chosen.id]
    return ordered
