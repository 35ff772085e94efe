"""The context window an endpoint's server says it has (issue 29 item 1), asked once per endpoint and
model in each process.

Sources, in order: llama.cpp's ``GET {origin}/props`` (``default_generation_settings.n_ctx``; the base
URL without its ``/v1``), then the model's entry of the OpenAI-compatible ``GET {base}/models``
(``context_length`` as OpenRouter and LM Studio list it, ``max_model_len`` as vLLM does). Whatever
fails, times out or says nothing usable is "not reported", never an error of the turn: the setting
applies. The answer is remembered either way, so a server without such a route costs one short ask.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import aiohttp

from bot.conversation.providers.openai_compat import DEFAULT_BASE_URL

logger = logging.getLogger(__name__)

# Each ask holds a turn (or an admin page) back once per process: short.
ASK_TIMEOUT_SECONDS = 3.0
# OpenRouter's model list is a few megabytes; anything far larger is not a model list.
MAX_BODY_BYTES = 16 * 1024 * 1024
LISTED_FIELDS = ("context_length", "max_model_len")
# Fewer tokens than any chat model runs with: a broken answer, not a window.
MIN_REPORTED_WINDOW = 256


def _window(value: Any) -> int | None:
    believable = isinstance(value, int) and not isinstance(value, bool) and value >= MIN_REPORTED_WINDOW
    return value if believable else None


async def _json(session: aiohttp.ClientSession, url: str) -> Any:
    """The JSON body of a 200 answer to ``GET url``, or None: a source that fails leaves the next one
    (no redirects: the key stays at the address the operator gave)."""
    try:
        async with session.get(url, allow_redirects=False) as response:
            if response.status != 200:
                return None
            body = bytearray()
            async for chunk in response.content.iter_chunked(64 * 1024):
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    return None
        return json.loads(body)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        # ValueError: a body that is not JSON, or a base URL that is not one.
        logger.info("an endpoint's context window could not be read (%s)", type(exc).__name__)
        return None


def _from_props(props: Any) -> int | None:
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    return _window(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _from_model_list(listing: Any, model: str) -> int | None:
    entries = listing.get("data") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and entry.get("id") == model:
            for name in LISTED_FIELDS:
                if (window := _window(entry.get(name))) is not None:
                    return window
    return None


async def ask_reported_window(base_url: str, api_key: str, model: str) -> int | None:
    """What the server at ``base_url`` reports as ``model``'s context window, or None."""
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = aiohttp.ClientTimeout(total=ASK_TIMEOUT_SECONDS)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
        window = _from_props(await _json(session, base.removesuffix("/v1") + "/props"))
        if window is None and model:
            window = _from_model_list(await _json(session, base + "/models"), model)
        return window


class ReportedWindows:
    """Reported windows per (base URL, model), shared by the process's turns and loops."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], int | None] = {}
        self._lock = threading.Lock()

    async def window(self, base_url: str, api_key: str, model: str, *, fresh: bool = False) -> int | None:
        """The remembered answer, or a new ask (``fresh``: always a new ask, as the admin's test does)."""
        key = (base_url, model)
        with self._lock:
            if not fresh and key in self._known:
                return self._known[key]
        window = await ask_reported_window(base_url, api_key, model)
        with self._lock:
            self._known[key] = window
        return window

    def clear(self) -> None:
        with self._lock:
            self._known.clear()


REPORTED_WINDOWS = ReportedWindows()
