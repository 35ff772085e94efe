"""The provider contract of the bot: assembled context items in, one reply text out.

Providers are the imperative shell around a model. They receive the pipeline's ``ContextItem`` list
unchanged (the prompt the moderator sees in the inspector is exactly what is sent) and never log
prompt or reply text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chatcontext.types import ContextItem

ROLE_TO_OPENAI = {"system": "system", "user": "user", "model": "assistant"}

# Receives each piece of a streamed reply as it arrives (the playground shows it live). After a retry
# the pieces start again from the beginning: the returned GenerationResult is the reply of record.
DeltaSink = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class GenerationResult:
    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    latency_ms: int = 0


class ProviderError(Exception):
    """Generation failed after the allowed retry. The message is short, carries no prompt text, and
    is what the prompt record keeps as its error."""


class Provider(Protocol):
    name: str
    model_name: str

    async def generate(
        self, items: Sequence[ContextItem], *, stream: bool, on_delta: DeltaSink | None = None
    ) -> GenerationResult:
        """One reply for the assembled prompt; raises ProviderError on failure. With ``stream`` and
        ``on_delta``, the pieces of the reply are passed to ``on_delta`` as they arrive."""


def to_chat_messages(items: Sequence[ContextItem]) -> list[dict[str, str]]:
    """ContextItems → OpenAI chat messages: system→system, user→user, model→assistant.

    Only text parts are sent (media descriptors are resolved by a capability-aware adapter, not
    here); items without text are dropped because most OpenAI-compatible servers reject empty turns.
    """
    messages: list[dict[str, str]] = []
    for item in items:
        text = item.text
        if text.strip():
            messages.append({"role": ROLE_TO_OPENAI[item.role], "content": text})
    return messages
