"""The prompt records a user appears in, for the user view and the export (``community.export``).

Prompt records are chatcontext's table, and personas imports nothing above it (the import rule), so
chatcontext registers its finder here from its AppConfig.ready, as it registers its store for
forget-me (``personas.forgetting``) and its server-list columns (``personas.admin.columns``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# (user_disc_id, server ids or None for every server, how many) → the newest records about the user,
# each a JSON-ready dict with at least "id" and "server_id".
RecordFinder = Callable[[str, frozenset[int] | None, int], list[dict[str, Any]]]

_finder: RecordFinder | None = None


def register_record_finder(finder: RecordFinder) -> None:
    global _finder
    _finder = finder


def records_about(user_disc_id: str, server_ids: frozenset[int] | None, limit: int) -> list[dict[str, Any]]:
    # No silent fallback: an export that says "in no prompt record" while records exist would mislead.
    if _finder is None:
        raise RuntimeError("no prompt-record finder is registered (chatcontext registers one when it is ready)")
    return _finder(user_disc_id, server_ids, limit)
