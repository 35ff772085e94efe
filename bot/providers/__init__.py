"""Provider selection: per-server settings first, then the LLM_* environment (settings.py)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from bot.providers.base import GenerationResult, Provider, ProviderError, to_chat_messages
from bot.providers.echo import EchoProvider
from bot.providers.openai_compat import OpenAICompatProvider
from personas.models import ServerSettings

__all__ = [
    "EchoProvider",
    "GenerationResult",
    "OpenAICompatProvider",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "build_provider",
    "provider_config",
    "to_chat_messages",
]


@dataclass(frozen=True)
class ProviderConfig:
    kind: str  # "openai" | "echo"
    base_url: str = ""
    api_key: str = ""
    model: str = ""
    timeout_s: float = 60.0


def provider_config(server_settings: ServerSettings | None) -> ProviderConfig:
    """Resolve the provider of one server. Each field falls back to its LLM_* setting.

    The echo provider is used only when asked for by name, or when nothing points at a real
    server (no provider, base URL, key or model anywhere): it is never the default once a real
    provider is configured.
    """
    s = server_settings
    base_url = (s.llm_base_url if s else "") or settings.LLM_BASE_URL
    api_key = (s.llm_api_key if s else "") or settings.LLM_API_KEY
    model = (s.llm_model if s else "") or settings.LLM_MODEL
    kind = (s.llm_provider if s else "") or settings.LLM_PROVIDER
    if not kind:
        kind = "openai" if (base_url or api_key or model) else "echo"
    return ProviderConfig(
        kind=kind, base_url=base_url, api_key=api_key, model=model, timeout_s=settings.LLM_TIMEOUT_SECONDS
    )


def build_provider(config: ProviderConfig, persona_name: str) -> Provider:
    if config.kind == "echo":
        return EchoProvider(persona_name)
    return OpenAICompatProvider(
        base_url=config.base_url, api_key=config.api_key, model=config.model, timeout_s=config.timeout_s
    )
