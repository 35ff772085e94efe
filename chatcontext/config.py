"""Environment tunables of the stage (build-context.md §0.1), read once per call, never cached,
so tests can set them with monkeypatch."""

from __future__ import annotations

import os
from dataclasses import dataclass

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    return default


def _int(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        return default
    return max(minimum, value) if minimum is not None else value


@dataclass(frozen=True)
class StageConfig:
    reaction_context_enabled: bool = True
    reaction_max_api_calls_per_turn: int = 20
    reaction_max_reactions_per_message: int = 4
    reaction_max_users_per_reaction: int = 5
    forward_chain_max_depth: int = 3
    voice_transcript_cache_ttl_minutes: int = 120
    emoji_penalty_enabled: bool = True
    emoji_penalty_lookback: int = 3
    emoji_penalty_threshold: int = 1
    media_image_message_limit: int = 3
    emoji_sticker_cache_ttl_minutes: int = 10
    default_botname: str = "Tomori"

    @classmethod
    def from_env(cls) -> StageConfig:
        ttl = _int("VOICE_TRANSCRIPT_CACHE_TTL_MINUTES", 120)
        return cls(
            reaction_context_enabled=_flag("REACTION_CONTEXT_ENABLED", True),
            reaction_max_api_calls_per_turn=_int("REACTION_CONTEXT_MAX_API_CALLS_PER_TURN", 20, 0),
            reaction_max_reactions_per_message=_int("REACTION_CONTEXT_MAX_REACTIONS_PER_MESSAGE", 4, 1),
            reaction_max_users_per_reaction=_int("REACTION_CONTEXT_MAX_USERS_PER_REACTION", 5, 0),
            forward_chain_max_depth=_int("FORWARD_CHAIN_MAX_DEPTH", 3, 0),
            voice_transcript_cache_ttl_minutes=ttl if ttl > 0 else 120,
            # Only the exact word disables it (BC8-11).
            emoji_penalty_enabled=os.environ.get("EMOJI_PENALTY_ENABLED", "") != "false",
            # [QUIRK] the reference falls back to 2 for an unparsable lookback; we use the documented
            # default 3 so a typo does not silently change behaviour.
            emoji_penalty_lookback=_int("EMOJI_PENALTY_LOOKBACK", 3, 0),
            emoji_penalty_threshold=_int("EMOJI_PENALTY_THRESHOLD", 1),
            media_image_message_limit=_int("MEDIA_IMAGE_MESSAGE_LIMIT", 3, 0),
            emoji_sticker_cache_ttl_minutes=_int("EMOJI_STICKER_CACHE_TTL_MINUTES", 10, 1),
            default_botname=os.environ.get("DEFAULT_BOTNAME", "").strip() or "Tomori",
        )
