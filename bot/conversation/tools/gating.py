"""Which tools a persona turn offers, from the turn's own state (build-context.md BC9-01, BC9-07..09,
BC9-11) and the server's and persona's switches. No tools when:

- the provider cannot call tools (the echo provider; a server configured without tool support);
- the turn disables all tools (an impersonation turn, BC7-04/BC9-01; deliberate mode without intent);
- the server or the persona turns tools off.

Memory tools and the short-term memory tool need self teaching on; deliberate mode keeps only the
families whose intent the message asked for (``deliberate_tool_allowed_names``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.conversation.tools.base import Tool
from bot.conversation.tools.registry import FAMILY_INTENTS, TOOLS
from chatcontext.core.types import ShortTermNote, StreamingContext
from personas import models as m

# What the persona writes of its own accord; the server's self-teaching switch turns these off.
SELF_TAUGHT = frozenset({"memory", "short_term_memory"})


@dataclass(frozen=True)
class ToolPolicy:
    """The switches a server and persona set (``ServerSettings``, ``Persona.tools_enabled``)."""

    server_tools: bool = True
    persona_tools: bool = True
    self_teaching: bool = True

    @classmethod
    def load(cls, server_id: int, persona_id: int) -> ToolPolicy:
        settings = m.ServerSettings.objects.filter(server_id=server_id).values("tools_enabled", "self_teaching_enabled")
        row = settings.first()  # None: the server has no settings row, and its switches are the defaults
        persona = m.Persona.objects.filter(pk=persona_id).values_list("tools_enabled", flat=True).first()
        return cls(
            server_tools=row["tools_enabled"] if row is not None else True,
            persona_tools=bool(persona),
            self_teaching=row["self_teaching_enabled"] if row is not None else True,
        )


def turn_allows_tools(streaming: StreamingContext, *, provider_tools: bool, persona_id: int | None) -> bool:
    """The part of the decision that needs no database read."""
    return provider_tools and persona_id is not None and not streaming.disable_all_tools


def offered_tools(streaming: StreamingContext, policy: ToolPolicy) -> list[Tool]:
    if streaming.disable_all_tools or not (policy.server_tools and policy.persona_tools):
        return []
    tools = [t for t in TOOLS.values() if policy.self_teaching or t.family not in SELF_TAUGHT]
    allowed = streaming.deliberate_tool_allowed_names
    if allowed is not None:
        tools = [t for t in tools if FAMILY_INTENTS.get(t.family) in allowed]
    return tools


def load_short_term_note(
    server_id: int, persona_id: int, channel_disc_id: str, *, provider_tools: bool
) -> ShortTermNote:
    """The note a persona turn reads, and whether the turn can offer the tool (the provider takes
    tools, neither the server nor the persona turned them off, and self teaching is on)."""
    row = m.ShortTermMemory.objects.filter(persona_id=persona_id, channel_disc_id=channel_disc_id).first()
    policy = ToolPolicy.load(server_id, persona_id)
    return ShortTermNote(
        content=row.content if row is not None else "",
        updated_at_ms=int(row.updated_at.timestamp() * 1000) if row is not None else None,
        tool_offered=provider_tools and policy.server_tools and policy.persona_tools and policy.self_teaching,
        author_ids=tuple(str(a) for a in row.author_disc_ids) if row is not None else (),
    )
