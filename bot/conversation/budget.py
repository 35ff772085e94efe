"""A turn's context budget (build-context.md §13) from its endpoint, and the calibration of the token
count against what the endpoint reports.

The count (tiktoken's cl100k) is not the model's tokenizer. After every turn without tools whose
provider reported ``prompt_tokens``, the ratio of that figure to the count of what was sent is
remembered per endpoint and model, in this process; the next prompt's count is scaled by it (an
average weighted towards recent turns, bounded so one odd answer cannot empty a prompt). The
margin (``LLM_TOKEN_MARGIN_PERCENT``) covers what the ratio does not.

The window is the endpoint's setting, or the window its server reports when that is smaller
(``bot.conversation.providers.reported_window``); then the reply budget is at most half of it, so a
small model's prompt keeps room.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from bot.conversation.providers import ProviderConfig, ToolSpec
from bot.conversation.providers.reported_window import REPORTED_WINDOWS
from chatcontext.core.budget import ContextBudget, count_reserved

# Weight of the newest observation in the running ratio.
SMOOTHING = 0.3
# Bounds of a believable ratio: tokenizers differ by tens of percent, not by factors of four.
MIN_SCALE, MAX_SCALE = 0.5, 4.0


class Calibration:
    """Provider tokens per counted token, per (endpoint, model), shared by the process's turns."""

    def __init__(self) -> None:
        self._scales: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def scale(self, key: tuple[str, str]) -> float:
        return self._scales.get(key, 1.0)

    def observe(self, key: tuple[str, str], *, counted: int, usage: Mapping[str, Any]) -> None:
        reported = usage.get("prompt_tokens")
        if not isinstance(reported, int) or isinstance(reported, bool) or reported <= 0 or counted <= 0:
            return
        ratio = min(MAX_SCALE, max(MIN_SCALE, reported / counted))
        with self._lock:
            previous = self._scales.get(key)
            self._scales[key] = ratio if previous is None else previous + SMOOTHING * (ratio - previous)

    def clear(self) -> None:
        with self._lock:
            self._scales.clear()


CALIBRATION = Calibration()


def calibration_key(config: ProviderConfig) -> tuple[str, str]:
    return (config.endpoint, config.model)


def context_budget(config: ProviderConfig, tools: Sequence[ToolSpec] = ()) -> ContextBudget:
    """The budget of a prompt to ``config``'s endpoint, with the tools' descriptions reserved."""
    return ContextBudget(
        window=config.context_window,
        reply_tokens=config.max_reply_tokens,
        scale=CALIBRATION.scale(calibration_key(config)),
        margin_percent=settings.LLM_TOKEN_MARGIN_PERCENT,
        reserved=count_reserved([json.dumps(tool.as_openai()) for tool in tools]),
    )


async def with_reported_window(config: ProviderConfig) -> ProviderConfig:
    """``config`` with its endpoint's reported window when that is smaller than the setting."""
    if config.kind == "echo":
        return config
    reported = await REPORTED_WINDOWS.window(config.base_url, config.api_key, config.model)
    if reported is None or reported >= config.context_window:
        return config
    return dataclasses.replace(
        config, context_window=reported, max_reply_tokens=min(config.max_reply_tokens, reported // 2)
    )
