"""Counted dependency reads of one hydration run (H-02, H-06, H-22).

Every read hydration makes is counted per dependency (participants read) and per batched call, and a
read that raises degrades to the caller's fallback; whether that fallback fails closed is the
caller's decision (H-06). The counts are what the diagnostics report: never ids.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chatcontext.participants.loaders import BatchRead

logger = logging.getLogger(__name__)
T = TypeVar("T")

DEPENDENCIES = (
    "user_row_loads",
    "registrations",
    "blacklist_reads",
    "privacy_reads",
    "personal_memory_reads",
    "reminder_reads",
    "member_reads",
    "fallback_user_reads",
    "presence_reads",
    "naming_preference_reads",
)


@dataclass
class DependencyCalls:
    """Counts per dependency (participants read) and per batched call; never ids (H-02, H-22)."""

    reads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DEPENDENCIES, 0))
    batches: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)

    def batch(self, name: str, count: int) -> None:
        self.reads[name] += count
        self.batches[name] = self.batches.get(name, 0) + 1

    def failed(self, name: str, count: int = 1) -> None:
        self.failures[name] = self.failures.get(name, 0) + count
        # The exception text may carry ids or names: log the dependency only (no exc_info).
        logger.warning("participant hydration read failed: %s", name)

    def guarded(self, name: str, count: int, read: Callable[[], T], fallback: T, *, failures: int | None = None) -> T:
        """One batched read of ``count`` participants: counted, and ``fallback`` when it raises (H-06:
        the caller's fallback says whether that fails closed). ``failures`` is what a raise counts,
        ``count`` unless given."""
        self.batch(name, count)
        try:
            return read()
        except Exception:
            self.failed(name, count if failures is None else failures)
            return fallback


def fail_closed_read(
    calls: DependencyCalls, name: str, ids: list[str], read: Callable[[list[str]], BatchRead[Any]]
) -> tuple[Mapping[str, Any], set[str]]:
    """H-06: the values read, and the ids whose read failed (all of them when the call raised)."""
    if not ids:
        return {}, set()
    result = calls.guarded(name, len(ids), lambda: read(ids), BatchRead[Any]({}, frozenset(ids)))
    if result.failed:
        calls.failed(name, len(result.failed))
    return result.values, set(result.failed)
