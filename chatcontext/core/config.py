"""Tunables of the stage (build-context.md §0.1) as one value, with their lower bounds applied.
``botplatform/settings.py`` reads them from the environment into ``settings.TOMORI``;
``chatcontext.stage_settings.stage_config`` builds this value from there. A turn snapshot keeps the
value its turn was built with (``stage``, turn-snapshot.md §1, format 4), so a replay does not depend
on the replaying process's settings."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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
    history_window_step: int = 40

    @classmethod
    def from_tomori(cls, tomori: Mapping[str, int], *, default_botname: str = "Tomori") -> StageConfig:
        ttl = int(tomori["VOICE_TRANSCRIPT_CACHE_TTL_MINUTES"])
        return cls(
            reaction_context_enabled=bool(tomori["REACTION_CONTEXT_ENABLED"]),
            reaction_max_api_calls_per_turn=max(0, int(tomori["REACTION_CONTEXT_MAX_API_CALLS_PER_TURN"])),
            reaction_max_reactions_per_message=max(1, int(tomori["REACTION_CONTEXT_MAX_REACTIONS_PER_MESSAGE"])),
            reaction_max_users_per_reaction=max(0, int(tomori["REACTION_CONTEXT_MAX_USERS_PER_REACTION"])),
            forward_chain_max_depth=max(0, int(tomori["FORWARD_CHAIN_MAX_DEPTH"])),
            voice_transcript_cache_ttl_minutes=ttl if ttl > 0 else 120,
            emoji_penalty_enabled=bool(tomori["EMOJI_PENALTY_ENABLED"]),
            emoji_penalty_lookback=max(0, int(tomori["EMOJI_PENALTY_LOOKBACK"])),
            emoji_penalty_threshold=int(tomori["EMOJI_PENALTY_THRESHOLD"]),
            media_image_message_limit=max(0, int(tomori["MEDIA_IMAGE_MESSAGE_LIMIT"])),
            emoji_sticker_cache_ttl_minutes=max(1, int(tomori["EMOJI_STICKER_CACHE_TTL_MINUTES"])),
            default_botname=default_botname.strip() or "Tomori",
            history_window_step=max(0, int(tomori.get("HISTORY_WINDOW_STEP", 40))),
        )

    def as_json(self) -> dict[str, Any]:
        """Every field by name: the snapshot's ``stage`` object (turn-snapshot.md §1)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, stage: Mapping[str, Any]) -> StageConfig:
        """The value a snapshot's ``stage`` describes (validated by the schema, so no unknown key). A
        field the object lacks or leaves null takes its default: a document written before the field
        existed was built before its setting existed, that is, as under the default."""
        return cls(**{k: v for k, v in stage.items() if v is not None})
