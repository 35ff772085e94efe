"""The provider contract of the bot: assembled context items in, one reply text out.

Providers are the imperative shell around a model. They receive the pipeline's ``ContextItem`` list
unchanged (the prompt the moderator sees in the inspector is exactly what is sent) and never log
prompt or reply text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chatcontext.types import ContextItem, ImagePart

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


def to_chat_messages(items: Sequence[ContextItem]) -> list[dict[str, Any]]:
    """ContextItems → OpenAI chat messages: system→system, user→user, model→assistant.

    An item's text is its content; an item that carries image parts (``bot.conversation.media``
    adds them for a vision model) gets a list of content parts instead, its text then each image as
    an ``image_url`` part. Items without text or images are dropped because most OpenAI-compatible
    servers reject empty turns.
    """
    messages: list[dict[str, Any]] = []
    for item in items:
        text = item.text
        images = [p for p in item.parts if isinstance(p, ImagePart)]
        if images:
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
            content += [{"type": "image_url", "image_url": {"url": image.uri}} for image in images]
            messages.append({"role": ROLE_TO_OPENAI[item.role], "content": content})
        elif text.strip():
            messages.append({"role": ROLE_TO_OPENAI[item.role], "content": text})
    return messages
