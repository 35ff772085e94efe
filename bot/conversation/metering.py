"""A turn's provider with every model request counted under its endpoint's name (``personas.metrics``):
the tool loop makes several requests per turn, and each one is a request the endpoint answered or not."""

from __future__ import annotations

import time
from typing import Any

from bot.conversation.providers import GenerationResult, Provider
from personas.metrics import PROVIDER_ERRORS, PROVIDER_LATENCY


class MeteredProvider:
    def __init__(self, provider: Provider, endpoint: str) -> None:
        self._provider = provider
        self._endpoint = endpoint

    def __getattr__(self, name: str) -> Any:
        # name, model_name, supports_tools, …: whatever the runner and the tool loop read.
        return getattr(self._provider, name)

    async def generate(self, *args: Any, **kwargs: Any) -> GenerationResult:
        started = time.perf_counter()
        try:
            return await self._provider.generate(*args, **kwargs)
        except Exception:
            PROVIDER_ERRORS.labels(self._endpoint).inc()
            raise
        finally:
            PROVIDER_LATENCY.labels(self._endpoint).observe(time.perf_counter() - started)
