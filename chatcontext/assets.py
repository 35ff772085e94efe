"""Persona assets: the server's emoji and sticker rows (build-context.md BC7-08, data-model.md §2.16).

The only module of the builder half that does I/O: it reads the Django cache (key
`emoji_sticker:{server_id}`) and, on a miss, lets the shell sync from Discord and then loads the rows
from the database. The clock is an input: freshness is judged against `now_ms`, never a wall clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.core.cache import cache

from chatcontext import repository
from chatcontext.core.config import StageConfig
from chatcontext.core.types import EmojiRow, PersonaInfo, ServerConfig, StickerRow

logger = logging.getLogger(__name__)

# A failed refresh falls back to the stale entry (data-model.md §2.16), so entries outlive their TTL
# in the cache by this margin; freshness itself is decided by `cached_at`.
_STALE_GRACE_SECONDS = 24 * 60 * 60

RowLoader = Callable[[int], tuple[list[EmojiRow], list[StickerRow]]]
DiscordSync = Callable[[int], None]


@dataclass(frozen=True)
class PersonaAssets:
    emoji_strings: list[str] = field(default_factory=list)
    emojis: list[EmojiRow] | None = None
    stickers: list[StickerRow] | None = None
    is_rp_channel: bool = False


def _load_rows_from_database(server_id: int) -> tuple[list[EmojiRow], list[StickerRow]]:
    return repository.load_emojis_and_stickers(server_id)


@dataclass(frozen=True)
class AssetSources:
    """Where a cache miss refreshes from: ``sync_from_discord`` (the shell's, which throttles itself)
    first, then ``load_rows`` (the database)."""

    load_rows: RowLoader = _load_rows_from_database
    sync_from_discord: DiscordSync | None = None


def cache_key(server_id: int) -> str:
    return f"emoji_sticker:{server_id}"


def is_rp_channel(server: ServerConfig, channel_id: str, thread_parent_id: str | None = None) -> bool:
    """BC7-08: the channel (or the thread's parent) is one of the server's RP channels."""
    rp_ids = set(server.rp_channel_ids)
    return channel_id in rp_ids or (thread_parent_id is not None and thread_parent_id in rp_ids)


def emoji_strings(emojis: Sequence[EmojiRow]) -> list[str]:
    """BC7-08: `<a:{name}:{id}>` for animated emojis, `<:{name}:{id}>` otherwise, in row order."""
    return [f"<{'a' if e.is_animated else ''}:{e.emoji_name}:{e.emoji_disc_id}>" for e in emojis]


def invalidate_server_assets(server_id: int) -> None:
    """Call on guild emoji/sticker update events."""
    cache.delete(cache_key(server_id))


def load_server_assets(
    server_id: int,
    *,
    now_ms: int,
    ttl_minutes: int,
    emoji_enabled: bool,
    sticker_enabled: bool,
    sources: AssetSources = AssetSources(),
) -> tuple[list[EmojiRow] | None, list[StickerRow] | None]:
    """Cached `(emojis, stickers)` of one server; a disabled kind returns None.

    Both kinds disabled → `(None, None)` without touching the cache or the database. On a miss or a
    stale entry ``sources`` refresh it; when that fails the stale entry is served if there is one.
    """
    if not emoji_enabled and not sticker_enabled:
        return None, None
    key = cache_key(server_id)
    entry = cache.get(key)
    fresh = entry is not None and now_ms - int(entry["cached_at"]) < ttl_minutes * 60_000
    if not fresh:
        try:
            if sources.sync_from_discord is not None:
                sources.sync_from_discord(server_id)
            emojis, stickers = sources.load_rows(server_id)
        except Exception:
            logger.warning("emoji/sticker cache refresh failed; serving %s", "stale entry" if entry else "nothing")
            if entry is None:
                return ([] if emoji_enabled else None), ([] if sticker_enabled else None)
        else:
            entry = {"emojis": tuple(emojis), "stickers": tuple(stickers), "cached_at": now_ms}
            cache.set(key, entry, timeout=ttl_minutes * 60 + _STALE_GRACE_SECONDS)
    assert entry is not None
    return (
        list(entry["emojis"]) if emoji_enabled else None,
        list(entry["stickers"]) if sticker_enabled else None,
    )


def load_persona_assets(
    *,
    server: ServerConfig,
    persona: PersonaInfo,
    channel_id: str,
    now_ms: int,
    config: StageConfig,
    thread_parent_id: str | None = None,
    guild_available: bool = True,
    sources: AssetSources = AssetSources(),
) -> PersonaAssets:
    """BC7-08: emoji strings and rows for the turn; DMs, missing guilds and serverless personas get none.

    RP channels force both kinds off (BC9-11 then disables them on the effective persona as well).
    """
    if server.is_dm or not guild_available or persona.server_id is None:
        return PersonaAssets()
    rp = is_rp_channel(server, channel_id, thread_parent_id)
    emojis, stickers = load_server_assets(
        persona.server_id,
        now_ms=now_ms,
        ttl_minutes=config.emoji_sticker_cache_ttl_minutes,
        emoji_enabled=server.emoji_usage_enabled and not rp,
        sticker_enabled=server.sticker_usage_enabled and not rp,
        sources=sources,
    )
    return PersonaAssets(emoji_strings=emoji_strings(emojis or []), emojis=emojis, stickers=stickers, is_rp_channel=rp)
