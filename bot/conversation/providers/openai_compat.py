"""Generation through any OpenAI-compatible chat-completions server (OpenAI, OpenRouter, vLLM,
llama.cpp, Ollama), with the `openai` SDK.

One attempt is bounded by ``timeout_s`` end to end (a stream that stalls counts); a timeout, a
connection failure, a 429 or a 5xx is retried exactly once, immediately (when a server has fallback
endpoints, the next endpoint is tried instead: ``bot.conversation.providers.fallback``). Anything
else fails at once. Every request carries the persona's sampling settings that are set. Log lines
carry the failure kind and status only, never prompt or response text; the error of the turn's
record adds the provider's own message (``provider_message``: one bounded line,
keys removed), which moderators read in the inspector.

Tools go out as ``tools`` with ``tool_choice: auto``; the calls come back whole from a completion
and in pieces (per ``index``: id, name, argument fragments) from a stream. A server that answers a
request with tools by a 400/404/422 whose message is about tools (its model has no tool support)
is asked once more without them, and the result says so (``tools_refused``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from bot.conversation.providers.base import (
    DeltaSink,
    GenerationResult,
    ProviderError,
    ToolCall,
    ToolSpec,
    to_chat_messages,
)
from chatcontext.core.storable import storable_text
from chatcontext.core.types import ContextItem
from personas.values.sampling import Sampling

logger = logging.getLogger(__name__)

ATTEMPTS = 2  # the first try and one retry
# How a server without tool support answers a request that offers tools, in words about tools
# (llama.cpp: "tools param requires --jinja flag"; vLLM: '"auto" tool choice requires
# --enable-auto-tool-choice'; Ollama: "… does not support tools").
TOOLS_REJECTED_STATUSES = frozenset({400, 404, 422})
_ABOUT_TOOLS = re.compile(r"tool|function", re.IGNORECASE)
ERROR_MESSAGE_CHARS = 300
REDACTED = "[redacted]"
# Key-shaped words: the usual key prefixes (OpenAI and OpenRouter sk-, Groq gsk_, Hugging Face hf_,
# Google AIza, xAI xai-), a bearer token, and any run of 32+ letters and digits without a separator
# (hex and base64 keys; model names have hyphens, so they stay readable).
_KEY_LIKE = re.compile(r"(?i:bearer)\s+\S+|\b(?:sk-|gsk_|hf_|xai-|AIza)[\w*.-]+|\b[A-Za-z0-9+/]{32,}=*")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = urlsplit(DEFAULT_BASE_URL).hostname
# The SDK refuses to start without a key. With none configured (local servers ignore it) it gets this
# constant, and every request omits the Authorization header, so not even the placeholder is sent.
PLACEHOLDER_API_KEY = "not-needed"
NO_AUTHORIZATION: dict[str, str | openai.Omit] = {"Authorization": openai.Omit()}
# The SDK adds headers from OPENAI_ORG_ID and OPENAI_PROJECT_ID of the environment to every request,
# whatever the URL. The platform is configured by LLM_* only; nothing else leaves with a prompt.
NO_ENVIRONMENT_HEADERS: dict[str, str | openai.Omit] = {
    "OpenAI-Organization": openai.Omit(),
    "OpenAI-Project": openai.Omit(),
}


def provider_message(body: object, *, api_key: str = "") -> str:
    """The provider's own words for an HTTP error (``{"error": {"message": …}}`` from OpenAI,
    llama.cpp and vLLM, a top-level ``message`` from older vLLM, ``detail`` from FastAPI servers, or
    a plain-text body), as one bounded line with anything that looks like a key removed: it is
    stored in the record and shown to moderators."""
    if isinstance(body, Mapping):
        message = body.get("message") or body.get("detail")
    else:
        message = body
    if not isinstance(message, str):
        return ""
    return one_line(message, api_key=api_key)


def one_line(text: str, *, api_key: str = "") -> str:
    """``text`` from a provider as one printable line of at most ``ERROR_MESSAGE_CHARS``, without
    key-shaped words or ``api_key``: safe to store and to show to moderators."""
    if api_key:
        text = text.replace(api_key, REDACTED)
    line = " ".join(_UNPRINTABLE.sub(" ", _KEY_LIKE.sub(REDACTED, text)).split())
    return line if len(line) <= ERROR_MESSAGE_CHARS else line[: ERROR_MESSAGE_CHARS - 1] + "…"


def _describe(exc: BaseException) -> str:
    """The failure's kind and status: what a log line says."""
    if isinstance(exc, openai.APIStatusError):
        return f"provider returned HTTP {exc.status_code}"
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return "provider timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "provider unreachable"
    if isinstance(exc, openai.APIError):  # an error event in the middle of a stream (llama.cpp, vLLM)
        return "provider reported an error mid-stream"
    return f"provider failed ({type(exc).__name__})"


def _failure(exc: BaseException, *, api_key: str) -> str:
    """What the turn's record says: the kind and status, and the provider's own message."""
    message = provider_message(exc.body, api_key=api_key) if isinstance(exc, openai.APIError) else ""
    return f"{_describe(exc)}: {message}" if message else _describe(exc)


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APITimeoutError | openai.APIConnectionError | TimeoutError)


def _rejects_tools(exc: BaseException) -> bool:
    """A 400/404/422 is a refusal of the tools only when the provider says it is about them: a 404
    for a missing model is no reason to ask again without tools."""
    return (
        isinstance(exc, openai.APIStatusError)
        and exc.status_code in TOOLS_REJECTED_STATUSES
        and bool(_ABOUT_TOOLS.search(provider_message(exc.body)))
    )


def _usage_dict(usage: Any) -> dict[str, Any]:
    return usage.model_dump(exclude_none=True) if usage is not None else {}


ClientKey = tuple[str, str, float]
# A client's connection pool belongs to the event loop it first ran in: a keep-alive connection
# opened there is useless (RuntimeError) in any other loop. Every loop gets its own clients, and a
# loop's clients go with it (weak keys). Callers run in many loops: the bot's, daphne's, and a fresh
# one for every async_to_sync / asyncio.run of a Celery task, a management command or a test.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ClientKey, AsyncOpenAI]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(base_url: str, api_key: str, timeout_s: float) -> AsyncOpenAI:
    """One SDK client (and connection pool) per server configuration and running event loop.

    The SDK's own retries are off: the one retry of ``generate`` also covers stalled streams.
    """
    loop = asyncio.get_running_loop()
    for stale in [other for other in _clients if other.is_closed()]:
        # A closed loop can still be referenced (by a finished task, say); its pools are dead already.
        del _clients[stale]
    clients = _clients.setdefault(loop, {})
    key = (base_url, api_key, timeout_s)
    if key not in clients:
        clients[key] = AsyncOpenAI(
            # Explicit, or the SDK would read OPENAI_BASE_URL from the environment.
            base_url=base_url or DEFAULT_BASE_URL,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=timeout_s,
            max_retries=0,
            default_headers=cast(dict[str, str], NO_ENVIRONMENT_HEADERS),
        )
    return clients[key]


def reply_limit_parameter(base_url: str) -> str:
    """The name of the reply's token cap: OpenAI's own API took ``max_tokens`` out for
    ``max_completion_tokens`` (its reasoning models answer 400 "Unsupported parameter" to the old one);
    the servers that copy its API (llama.cpp, vLLM, Ollama) know ``max_tokens``."""
    return "max_completion_tokens" if urlsplit(base_url or DEFAULT_BASE_URL).hostname == OPENAI_HOST else "max_tokens"


def sampling_options(sampling: Sampling, limit_parameter: str) -> dict[str, Any]:
    """The request's sampling fields: those set, under OpenAI's names (the reply cap under
    ``limit_parameter``, which the caller has capped already: ``Sampling.capped``)."""
    sent = sampling.as_json()
    options: dict[str, Any] = {limit_parameter: sent.pop("max_reply_tokens")} if "max_reply_tokens" in sent else {}
    return options | sent


class OpenAICompatProvider:
    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float,
        max_reply_tokens: int,
        sampling: Sampling | None = None,
        attempts: int = ATTEMPTS,
        cache_hints: bool = False,
    ) -> None:
        """``sampling``: the persona's settings, none by default (their reply cap at most ``max_reply_tokens``);
        ``attempts``: 1 when a fallback endpoint follows, which is tried instead of a retry;
        ``cache_hints``: mark the stable start of the prompt for the provider's cache."""
        self.model_name = model
        self.sampling = (sampling or Sampling()).capped(max_reply_tokens)
        self.cache_hints = cache_hints
        self.timeout_s = timeout_s
        self.attempts = attempts
        self._client_key: ClientKey = (base_url, api_key, timeout_s)
        self.reply_limit_parameter = reply_limit_parameter(base_url)
        self.sampling_options = sampling_options(self.sampling, self.reply_limit_parameter)
        self.request_headers: dict[str, str | openai.Omit] = {} if api_key else NO_AUTHORIZATION

    supports_tools = True

    @property
    def client(self) -> AsyncOpenAI:
        """The running loop's client: a provider may be built in one loop (or none) and used in another."""
        return shared_client(*self._client_key)

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
        messages: list[dict[str, Any]] = [*to_chat_messages(items, cache_hints=self.cache_hints), *followups]
        offered = [tool.as_openai() for tool in tools]
        refused = False
        started = time.monotonic()
        attempt = 1
        while True:
            try:
                async with asyncio.timeout(self.timeout_s):
                    options = {"tools": offered, "tool_choice": tool_choice} if offered else {}
                    options.update(self.sampling_options)
                    if stream:
                        text, usage, calls = await self._stream(messages, options, on_delta)
                    else:
                        text, usage, calls = await self._complete(messages, options)
            except Exception as exc:
                if offered and _rejects_tools(exc):
                    logger.info("provider refused the tools (%s); asking once without them", _describe(exc))
                    offered, refused = [], True
                    continue
                if attempt >= self.attempts or not _is_retryable(exc):
                    logger.warning("generation failed after %d attempt(s): %s", attempt, _describe(exc))
                    failure = _failure(exc, api_key=self._client_key[1])
                    raise ProviderError(failure, fallback=_is_retryable(exc)) from exc
                logger.info("generation attempt %d failed (%s); retrying once", attempt, _describe(exc))
                attempt += 1
                continue
            return GenerationResult(
                text=text,
                usage=usage,
                latency_ms=int((time.monotonic() - started) * 1000),
                tool_calls=calls,
                tools_refused=refused,
            )

    async def _complete(
        self, messages: list[dict[str, Any]], options: dict[str, Any]
    ) -> tuple[str, dict[str, Any], tuple[ToolCall, ...]]:
        response = await self.client.chat.completions.create(
            model=self.model_name,
            messages=cast(list[ChatCompletionMessageParam], messages),
            extra_headers=self.request_headers,
            **options,
        )
        message = response.choices[0].message if response.choices else None
        calls = tuple(
            ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
            for call in (message.tool_calls or [] if message else [])
            if call.type == "function"
        )
        return (message.content if message else None) or "", _usage_dict(response.usage), calls

    async def _stream(
        self, messages: list[dict[str, Any]], options: dict[str, Any], on_delta: DeltaSink | None = None
    ) -> tuple[str, dict[str, Any], tuple[ToolCall, ...]]:
        stream = await self.client.chat.completions.create(
            model=self.model_name,
            messages=cast(list[ChatCompletionMessageParam], messages),
            stream=True,
            stream_options={"include_usage": True},
            extra_headers=self.request_headers,
            **options,
        )
        parts: list[str] = []
        usage: dict[str, Any] = {}
        # index → [id, name, argument text]: a call arrives in fragments, its id and name first.
        pending: dict[int, list[str]] = {}
        async for chunk in stream:
            if chunk.usage is not None:
                usage = _usage_dict(chunk.usage)
            for choice in chunk.choices:
                if choice.delta.content:
                    parts.append(choice.delta.content)
                    if on_delta is not None:
                        await on_delta(storable_text(choice.delta.content))
                for piece in choice.delta.tool_calls or []:
                    slot = pending.setdefault(piece.index, ["", "", ""])
                    slot[0] = piece.id or slot[0]
                    if piece.function is not None:
                        slot[1] += piece.function.name or ""
                        slot[2] += piece.function.arguments or ""
        calls = tuple(
            ToolCall(id=call_id or f"call_{index}", name=name, arguments=arguments)
            for index, (call_id, name, arguments) in sorted(pending.items())
        )
        return "".join(parts), usage, calls
