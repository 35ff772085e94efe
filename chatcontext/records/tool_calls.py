"""A record's tool calls (``PromptRecord.tool_calls``) as the inspector and the playground panel show
them: each call with its arguments, outcome and the rows it wrote, linked to their admin pages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.urls import NoReverseMatch, reverse

# WrittenRow kinds (personas.provenance.ROW_MODELS) → their admin change pages.
ROW_ADMIN_URLS = {
    "personal_memory": "admin:personas_personalmemory_change",
    "server_memory": "admin:personas_servermemory_change",
    "reminder": "admin:personas_reminder_change",
}


@dataclass(frozen=True)
class WrittenRowLink:
    kind: str
    id: int
    url: str | None

    @property
    def label(self) -> str:
        return f"{self.kind.replace('_', ' ')} {self.id}"


@dataclass(frozen=True)
class ToolCallEntry:
    name: str
    arguments: str  # pretty JSON, or the raw text the model sent when it did not parse
    status: str  # ok | refused | error
    result: str
    ms: int
    rows: tuple[WrittenRowLink, ...]


@dataclass(frozen=True)
class ToolCallsView:
    offered: tuple[str, ...]
    rounds: int
    tools_refused: bool
    calls: tuple[ToolCallEntry, ...]


def _row_url(kind: str, row_id: int) -> str | None:
    name = ROW_ADMIN_URLS.get(kind)
    if name is None:
        return None
    try:
        return reverse(name, args=[row_id])
    except NoReverseMatch:
        return None


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def tool_calls_view(tool_calls: Mapping[str, Any]) -> ToolCallsView | None:
    """None when the turn offered no tools."""
    if not tool_calls:
        return None
    calls = tuple(
        ToolCallEntry(
            name=str(call.get("name", "")),
            arguments=_arguments(call.get("arguments")),
            status=str(call.get("status", "")),
            result=str(call.get("result", "")),
            ms=int(call.get("ms") or 0),
            rows=tuple(
                WrittenRowLink(str(row["kind"]), int(row["id"]), _row_url(str(row["kind"]), int(row["id"])))
                for row in call.get("rows") or []
            ),
        )
        for call in tool_calls.get("calls") or []
    )
    return ToolCallsView(
        offered=tuple(tool_calls.get("offered") or ()),
        rounds=int(tool_calls.get("rounds") or 0),
        tools_refused=bool(tool_calls.get("tools_refused")),
        calls=calls,
    )
