"""The offline echo provider: answers from the assembled prompt, for demos and tests.

It is chosen only when a server or the environment asks for it, or when no real provider is
configured at all (``bot.conversation.providers.build_provider``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from bot.conversation.providers.base import DeltaSink, GenerationResult, ToolSpec
from chatcontext.core.types import ContextItem, ContextItemTag

MAX_ECHOED_CHARS = 300


def last_user_text(items: Sequence[ContextItem]) -> str:
    """Text of the newest dialogue-history user item (tail directives are not what the user said)."""
    for item in reversed(items):
        if item.role == "user" and item.metadata_tag == ContextItemTag.DIALOGUE_HISTORY:
            return item.text
    return ""


class EchoProvider:
    name = "echo"
    model_name = "echo"
    supports_tools = False  # it answers from the prompt and can call nothing

    def __init__(self, persona_name: str, *, pace_s: float = 0.0) -> None:
        """``pace_s`` pauses after each streamed word: the echo answers at once, and the playground
        page slows it down so a person can watch it stream in."""
        self.persona_name = persona_name
        self.pace_s = pace_s

    async def generate(
        self,
        items: Sequence[ContextItem],
        *,
        stream: bool,
        on_delta: DeltaSink | None = None,
        tools: Sequence[ToolSpec] = (),
        followups: Sequence[dict[str, Any]] = (),
        tool_choice: str = "auto",
    ) -> GenerationResult:
        """``Provider.generate``. ``tools``, ``followups`` and ``tool_choice`` are ignored: with
        ``supports_tools`` false the runner sends none, and the echo can call nothing."""
        said = " ".join(last_user_text(items).split())[:MAX_ECHOED_CHARS]
        text = f"[echo] {self.persona_name}: I read {len(items)} prompt items; you said: {said}"
        if stream and on_delta is not None:
            for word in re.findall(r"\S+\s*", text):  # streamed word by word, like a model's tokens
                await on_delta(word)
                if self.pace_s:
                    await asyncio.sleep(self.pace_s)
        return GenerationResult(text=text, usage={"prompt_items": len(items)}, latency_ms=0)
