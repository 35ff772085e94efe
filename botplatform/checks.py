"""``manage.py check --deploy``: what Django's own deployment checks cannot know about this project."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register


@register(Tags.security, deploy=True)
def public_base_url_is_https(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """Sign-in hints, set-password links and the bot's inspector links are built from it."""
    if settings.PUBLIC_BASE_URL.startswith("https://"):
        return []
    return [
        Warning(
            f"PUBLIC_BASE_URL is {settings.PUBLIC_BASE_URL}: links sent to moderators (set-password, inspector) "
            "would point at a plain-HTTP or local address.",
            hint="Set PUBLIC_BASE_URL to the https:// address your reverse proxy serves.",
            id="botplatform.W001",
        )
    ]
