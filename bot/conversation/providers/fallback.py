"""A server's endpoints in order: its own (or approved, or the platform's), then its fallbacks
(issue 31 item 6).

Each request goes to the first endpoint; when that one times out, cannot be reached, or answers 429
or a 5xx (``ProviderError.fallback``), the next is asked at once, and so on. Any other failure (a
missing model, a refused key, a bad request) would fail the same way elsewhere, and ends the turn.
Every try is kept (``attempts``), so the prompt record says which endpoint answered and why each
one before it did not. Log lines name the endpoint by its place in the list only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.conversation.providers.base import DeltaSink, GenerationResult, ProviderError, ToolSpec
from bot.conversation.providers.openai_compat import OpenAICompatProvider
from chatcontext.core.types import ContextItem, JSONDict

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Attempt:
    endpoint: str  # Endpoint.name: "platform", "server" or an approved endpoint's name
    model: str
    failure: str = ""  # empty: it answered

    def as_json(self) -> JSONDict:
        shown: JSONDict = {"endpoint": self.endpoint, "model": self.model, "answered": not self.failure}
        return shown | ({"failure": self.failure} if self.failure else {})


class EndpointChain:
    name = "openai"
    supports_tools = True

    def __init__(self, links: Sequence[tuple[str, OpenAICompatProvider]]) -> None:
        """``links``: (endpoint name, its provider), the first the server's endpoint."""
        self._links = list(links)
        self._answering = self._links[0][1]
        self.attempts: list[Attempt] = []

    @property
    def model_name(self) -> str:
        """The model of the endpoint that answered last (before any answer: the first endpoint's)."""
        return self._answering.model_name

    def generation_record(self) -> JSONDict:
        """What the prompt record keeps of how the reply was asked for."""
        return {
            "sampling": self._links[0][1].sampling.as_json(),
            "endpoints": [attempt.as_json() for attempt in self.attempts],
        }

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
        request = {
            "stream": stream,
            "on_delta": on_delta,
            "tools": tools,
            "followups": followups,
            "tool_choice": tool_choice,
        }
        *fallible, (final, final_provider) = self._links
        for place, (endpoint, provider) in enumerate(fallible, start=1):
            try:
                return await self._ask(endpoint, provider, items, **request)
            except ProviderError as exc:
                if not exc.fallback:
                    raise
                logger.info("endpoint %d of %d failed; asking the next", place, len(self._links))
        return await self._ask(final, final_provider, items, **request)

    async def _ask(
        self, endpoint: str, provider: OpenAICompatProvider, items: Sequence[ContextItem], **request: Any
    ) -> GenerationResult:
        """One endpoint's answer, kept in ``attempts`` either way."""
        try:
            result = await provider.generate(items, **request)
        except ProviderError as exc:
            self.attempts.append(Attempt(endpoint, provider.model_name, str(exc)))
            raise
        self._answering = provider
        self.attempts.append(Attempt(endpoint, provider.model_name))
        return result
