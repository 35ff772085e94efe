"""The provider contract of the bot: assembled context items in, one reply text (or the tool calls
the model asks for) out.

Providers are the imperative shell around a model. They receive the pipeline's ``ContextItem`` list
unchanged (the prompt the moderator sees in the inspector is exactly what is sent), plus, on a turn
with tools, the tools offered and the chat messages of the earlier tool rounds (``followups``:
the assistant's tool calls and the tool results, in OpenAI's shape). They never log prompt, reply
or argument text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chatcontext.core.storable import storable_json_text, storable_text
from chatcontext.core.types import ContextItem, ContextItemTag, ImagePart

ROLE_TO_OPENAI = {"system": "system", "user": "user", "model": "assistant"}

# Receives each piece of a streamed reply as it arrives (the playground shows it live). After a retry
# the pieces start again from the beginning: the returned GenerationResult is the reply of record.
DeltaSink = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is offered it: a name, what it does, and the JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]

    def as_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is the raw JSON text the model wrote: it is
    parsed (and may fail to parse) by the tool layer, never here."""

    id: str
    name: str
    arguments: str

    def __post_init__(self) -> None:
        # Made storable here, the one door every provider's output passes (chatcontext.core.storable).
        object.__setattr__(self, "id", storable_text(self.id))
        object.__setattr__(self, "name", storable_text(self.name))
        object.__setattr__(self, "arguments", storable_json_text(self.arguments))

    def as_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class GenerationResult:
    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    latency_ms: int = 0
    tool_calls: tuple[ToolCall, ...] = ()
    # The server refused the request because it offered tools; the answer came from a tool-less call.
    tools_refused: bool = False

    def __post_init__(self) -> None:
        # A reply with a NUL or a lone surrogate was delivered, then failed its record: cleaned here,
        # whichever provider wrote it, before anything shows or stores it (chatcontext.core.storable).
        object.__setattr__(self, "text", storable_text(self.text))


class ProviderError(Exception):
    """Generation failed after the allowed retry. The message is short, carries no prompt text, and
    is what the prompt record keeps as its error. ``fallback``: the endpoint failed in a way another
    endpoint may not (a timeout, no connection, a 429 or a 5xx), so a server's next one is tried."""

    def __init__(self, message: str, *, fallback: bool = False) -> None:
        super().__init__(message)
        self.fallback = fallback


class Provider(Protocol):
    name: str

    @property
    def model_name(self) -> str:
        """The model asked; read only: ``EndpointChain`` names the one of the endpoint that answered."""

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
        """One reply for the assembled prompt; raises ProviderError on failure. With ``stream`` and
        ``on_delta``, the pieces of the reply are passed to ``on_delta`` as they arrive. With
        ``tools``, the result may hold ``tool_calls`` instead of (or besides) text; ``followups``
        are appended after the prompt's messages; ``tool_choice="none"`` asks for the reply with the
        tools still described (the last round of a turn whose calls ran out). The runner passes
        ``tools`` and ``followups`` only on a turn that offers tools, to providers whose
        ``supports_tools`` is true."""


# BC13-04 hint: providers that cache only where asked (Anthropic's OpenAI-compatible API, some proxies) cache
# the request up to each marked part; others ignore the field.
CACHE_CONTROL = {"type": "ephemeral"}


def cache_breakpoints(items: Sequence[ContextItem]) -> set[int]:
    """Positions whose end is a stable prefix: the last item before the history (instructions, persona,
    knowledge, profiles: held across a history step) and the newest history entry (what the next turn
    repeats before its new messages and the volatile tail)."""
    history = [i for i, item in enumerate(items) if item.metadata_tag == ContextItemTag.DIALOGUE_HISTORY]
    if not history:
        return set()
    return {i for i in (history[0] - 1, history[-1]) if i >= 0}


def to_chat_messages(items: Sequence[ContextItem], *, cache_hints: bool = False) -> list[dict[str, Any]]:
    """ContextItems → OpenAI chat messages: system→system, user→user, model→assistant.

    An item's text is its content; an item that carries image parts (``bot.conversation.media``
    adds them for a vision model) gets a list of content parts instead, its text then each image as
    an ``image_url`` part. Items without text or images are dropped because most OpenAI-compatible
    servers reject empty turns. With ``cache_hints`` the items of ``cache_breakpoints`` get their
    text as a part with ``cache_control``.
    """
    marked = cache_breakpoints(items) if cache_hints else set()
    messages: list[dict[str, Any]] = []
    for position, item in enumerate(items):
        text = item.text
        images = [p for p in item.parts if isinstance(p, ImagePart)]
        if images or (position in marked and text.strip()):
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
            if content and position in marked:
                content[0]["cache_control"] = CACHE_CONTROL
            content += [{"type": "image_url", "image_url": {"url": image.uri}} for image in images]
            messages.append({"role": ROLE_TO_OPENAI[item.role], "content": content})
        elif text.strip():
            messages.append({"role": ROLE_TO_OPENAI[item.role], "content": text})
    return messages
