"""The stage's tunables from Django's settings: read on every call (never cached, so a test's
``settings`` override applies)."""

from __future__ import annotations

from django.conf import settings

from chatcontext.core.config import StageConfig


def stage_config() -> StageConfig:
    """The tunables as ``settings.TOMORI`` and ``settings.DEFAULT_BOTNAME`` hold them."""
    return StageConfig.from_tomori(settings.TOMORI, default_botname=settings.DEFAULT_BOTNAME)
