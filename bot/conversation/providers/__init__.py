"""Provider selection: a server's own endpoint, an operator-approved one, or the platform's
(the LLM_* environment, settings.py), each taken whole."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

from django.conf import settings

from bot.conversation.providers.base import (
    DeltaSink,
    GenerationResult,
    Provider,
    ProviderError,
    ToolCall,
    ToolSpec,
    to_chat_messages,
)
from bot.conversation.providers.echo import EchoProvider
from bot.conversation.providers.fallback import EndpointChain
from bot.conversation.providers.openai_compat import ATTEMPTS, OpenAICompatProvider, one_line
from bot.conversation.providers.reported_window import REPORTED_WINDOWS
from chatcontext.core.types import ContextItem, JSONDict, TextPart
from personas.models import ServerSettings
from personas.values.sampling import Sampling

logger = logging.getLogger(__name__)

__all__ = [
    "DeltaSink",
    "EchoProvider",
    "Endpoint",
    "EndpointChain",
    "GenerationResult",
    "OpenAICompatProvider",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "ToolCall",
    "ToolSpec",
    "build_provider",
    "check_connection",
    "generation_record",
    "provider_config",
    "server_endpoint",
    "to_chat_messages",
]


@dataclass(frozen=True)
class Endpoint:
    """Where a turn's prompt goes and what it shows there: one unit, never assembled field by field."""

    # How metrics and logs name it: "platform", an approved endpoint's name, or "server" (a server's own).
    name: str = "platform"
    base_url: str = ""  # empty: OpenAI's public API (bot.conversation.providers.openai_compat.DEFAULT_BASE_URL)
    api_key: str = field(default="", repr=False)  # empty: no Authorization header at all
    model: str = ""
    # Tokens the model reads at once, and the reply cap kept free in them (bot.conversation.budget).
    context_window: int = field(default_factory=lambda: settings.LLM_CONTEXT_WINDOW)
    max_reply_tokens: int = field(default_factory=lambda: settings.LLM_MAX_REPLY_TOKENS)
    # Explicit prompt-cache hints on the stable blocks (bot.conversation.providers.base.cache_breakpoints).
    cache_hints: bool = field(default_factory=lambda: settings.LLM_CACHE_HINTS)

    @property
    def source(self) -> str:
        """What the admin calls it."""
        if self.name == "platform":
            return "the platform's endpoint"
        if self.name == "server":
            return "its own endpoint"
        return f"approved endpoint {self.name!r}"

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key or self.model)


@dataclass(frozen=True)
class ProviderConfig:
    kind: str  # "openai" | "echo"
    endpoint: str = "platform"  # Endpoint.name, or "echo"
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    model: str = ""
    timeout_s: float = 60.0
    # The server's model takes tool calls (ServerSettings.llm_supports_tools); off: it is sent none.
    tools: bool = True
    max_reply_tokens: int = field(default_factory=lambda: settings.LLM_MAX_REPLY_TOKENS)
    context_window: int = field(default_factory=lambda: settings.LLM_CONTEXT_WINDOW)
    cache_hints: bool = False
    # Asked in order when the endpoint above times out, cannot be reached, or answers 429 or a 5xx.
    fallbacks: tuple[Endpoint, ...] = ()
    # The answering persona's settings (the runner sets them per persona turn).
    sampling: Sampling = field(default_factory=Sampling)

    @property
    def endpoints(self) -> tuple[Endpoint, ...]:
        own = Endpoint(
            name=self.endpoint,
            base_url=self.base_url,
            api_key=self.api_key,
            model=self.model,
            context_window=self.context_window,
            max_reply_tokens=self.max_reply_tokens,
            cache_hints=self.cache_hints,
        )
        return (own, *self.fallbacks)


def platform_endpoint() -> Endpoint:
    return Endpoint(base_url=settings.LLM_BASE_URL, api_key=settings.LLM_API_KEY, model=settings.LLM_MODEL)


def server_endpoint(server_settings: ServerSettings | None) -> Endpoint:
    """The endpoint of one server, as a whole: its own (a base URL or a key, set by a superuser:
    its URL, its key or none, its model), else the approved endpoint it names (LLM_APPROVED_ENDPOINTS),
    else the platform's. The operator's key never travels to an address the operator did not give.
    """
    s = server_settings
    if s is None:
        return platform_endpoint()
    if s.llm_base_url or s.llm_api_key:
        return Endpoint(
            name="server",
            base_url=s.llm_base_url,
            api_key=s.llm_api_key,
            model=s.llm_model,
            context_window=s.llm_context_window or settings.LLM_CONTEXT_WINDOW,
            max_reply_tokens=s.llm_max_reply_tokens or settings.LLM_MAX_REPLY_TOKENS,
            cache_hints=s.llm_cache_hints,
        )
    if s.llm_endpoint:
        approved = settings.LLM_APPROVED_ENDPOINTS.get(s.llm_endpoint)
        if approved is not None:
            return Endpoint(name=s.llm_endpoint, **approved)
        logger.warning("approved endpoint %r is not configured any more; using the platform's", s.llm_endpoint)
    return platform_endpoint()


def fallback_endpoints(server_settings: ServerSettings | None, primary: Endpoint) -> tuple[Endpoint, ...]:
    """The server's fallback list as endpoints, in its order: approved endpoints only (a name the
    operator no longer configures is skipped, as is the primary itself)."""
    names = server_settings.llm_fallback_endpoints if server_settings else []
    endpoints = []
    for name in dict.fromkeys(names or ()):
        approved = settings.LLM_APPROVED_ENDPOINTS.get(name)
        if approved is None:
            logger.warning("a fallback endpoint is not configured any more; skipped")
        elif name != primary.name:
            endpoints.append(Endpoint(name=name, **approved))
    return tuple(endpoints)


def provider_config(server_settings: ServerSettings | None) -> ProviderConfig:
    """Resolve the provider of one server (``server_endpoint``).

    The echo provider is used only when asked for by name, or when nothing points at a real
    server (no base URL, key or model in the endpoint): it is never the default once a real
    provider is configured.
    """
    endpoint = server_endpoint(server_settings)
    kind = (server_settings.llm_provider if server_settings else "") or settings.LLM_PROVIDER
    if not kind:
        kind = "openai" if endpoint.configured else "echo"
    return ProviderConfig(
        kind=kind,
        endpoint="echo" if kind == "echo" else endpoint.name,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        model=endpoint.model,
        timeout_s=settings.LLM_TIMEOUT_SECONDS,
        tools=server_settings.llm_supports_tools if server_settings else True,
        max_reply_tokens=endpoint.max_reply_tokens,
        context_window=endpoint.context_window,
        cache_hints=endpoint.cache_hints,
        fallbacks=() if kind == "echo" else fallback_endpoints(server_settings, endpoint),
    )


def build_provider(config: ProviderConfig, persona_name: str, *, echo_pace_s: float = 0.0) -> Provider:
    """The echo, or the server's endpoints in order (``EndpointChain``): with fallbacks, each endpoint
    is asked once and the next one replaces the retry; alone, it keeps its one retry."""
    if config.kind == "echo":
        return EchoProvider(persona_name, pace_s=echo_pace_s)
    endpoints = config.endpoints
    attempts = ATTEMPTS if len(endpoints) == 1 else 1
    return EndpointChain(
        [
            (
                endpoint.name,
                OpenAICompatProvider(
                    base_url=endpoint.base_url,
                    api_key=endpoint.api_key,
                    model=endpoint.model,
                    timeout_s=config.timeout_s,
                    max_reply_tokens=min(config.max_reply_tokens, endpoint.max_reply_tokens),
                    sampling=config.sampling,
                    attempts=attempts,
                    cache_hints=endpoint.cache_hints,
                ),
            )
            for endpoint in endpoints
        ]
    )


def generation_record(provider: Provider) -> JSONDict:
    """How a turn's reply was asked for, for its prompt record: empty for a provider that keeps no
    such account (the echo, a test's stand-in)."""
    record = getattr(provider, "generation_record", None)
    return record() if record is not None else {}


# A connection test is one short request; it should not hold an admin page for LLM_TIMEOUT_SECONDS twice.
CHECK_TIMEOUT_SECONDS = 15.0
CHECK_PROMPT = (ContextItem(role="user", parts=[TextPart("Reply with the single word OK.")]),)


@dataclass(frozen=True)
class ConnectionCheck:
    ok: bool
    detail: str  # the model's answer or the failure, one bounded line without keys


async def check_connection(config: ProviderConfig) -> ConnectionCheck:
    """One small request to the endpoint of ``config`` (a superuser's *Test connection*)."""
    timeout_s = min(config.timeout_s, CHECK_TIMEOUT_SECONDS)
    # The server's endpoint itself: a fallback answering would hide that it fails.
    provider = build_provider(dataclasses.replace(config, timeout_s=timeout_s, fallbacks=()), "Tomori")
    try:
        result = await provider.generate(CHECK_PROMPT, stream=False)
    except ProviderError as exc:
        return ConnectionCheck(ok=False, detail=str(exc))
    answer = one_line(result.text, api_key=config.api_key) or "(an empty answer)"
    # Asked afresh: the test is how an operator sees a server restarted with another window.
    reported = await REPORTED_WINDOWS.window(config.base_url, config.api_key, config.model, fresh=True)
    return ConnectionCheck(
        ok=True,
        detail=f"{provider.model_name or 'the default model'} answered in {result.latency_ms} ms: {answer} "
        f"({window_note(reported, config.context_window)})",
    )


def window_note(reported: int | None, setting: int) -> str:
    """What the connection test says of the window a turn's budget uses."""
    if reported is None:
        return f"no context window reported; the setting's {setting} tokens apply"
    return f"reports a context window of {reported} tokens; the budget uses {min(reported, setting)}"
