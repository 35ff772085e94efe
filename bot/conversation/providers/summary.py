"""One start-up line naming the platform's language model: which endpoint and model, and the host it
talks to, never its key or credentials written into the URL (``serve`` and ``runbot`` log it)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from bot.conversation.providers import provider_config
from bot.conversation.providers.openai_compat import DEFAULT_BASE_URL


def endpoint_host(base_url: str) -> str:
    """The host (and port) of an endpoint URL: no user, password, path or query."""
    parts = urlsplit(base_url or DEFAULT_BASE_URL)
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname:
        return "an unparsable URL"
    return parts.hostname + (f":{port}" if port else "")


def platform_model_summary() -> str:
    config = provider_config(None)
    if config.kind == "echo":
        line = "offline echo provider, no model (set LLM_BASE_URL, LLM_API_KEY or LLM_MODEL for one)"
    else:
        model = config.model or "the provider's default model"
        key = "with a key" if config.api_key else "without a key"
        line = f"platform endpoint, OpenAI-compatible at {endpoint_host(config.base_url)}, {model}, {key}"
    approved = sorted(settings.LLM_APPROVED_ENDPOINTS)
    return line + (f"; approved endpoints: {', '.join(approved)}" if approved else "")
