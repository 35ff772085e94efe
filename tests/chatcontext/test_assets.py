"""BC7-08: persona assets and the emoji/sticker cache (data-model.md §2.16); §12 scenario 48."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.core.cache import cache

from chatcontext.assets import (
    AssetSources,
    cache_key,
    emoji_strings,
    invalidate_server_assets,
    is_rp_channel,
    load_persona_assets,
    load_server_assets,
)
from chatcontext.core.config import StageConfig
from chatcontext.core.types import EmojiRow, StickerRow
from personas.models import Server, ServerEmoji, ServerSticker
from tests.chatcontext.turn_factory import CHANNEL, NOW_MS, cafe, tomori

EMOJIS = [EmojiRow("11", "dance", is_animated=True), EmojiRow("22", "smile")]
STICKERS = [StickerRow("55", "wave")]
TTL_MS = 10 * 60_000


@pytest.fixture(autouse=True)
def _clean_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


class Loader:
    """A row loader double that counts calls and can fail."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail

    def __call__(self, server_id: int) -> tuple[list[EmojiRow], list[StickerRow]]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("database unavailable")
        return list(EMOJIS), list(STICKERS)


def assets(loader: Loader, *, now_ms: int = NOW_MS, sync_from_discord=None, **changes):  # type: ignore[no-untyped-def]
    fields: dict[str, object] = {
        "server": cafe(),
        "persona": tomori(),
        "channel_id": CHANNEL,
        "now_ms": now_ms,
        "config": StageConfig(),
        "sources": AssetSources(loader, sync_from_discord),
    }
    fields.update(changes)
    return load_persona_assets(**fields)  # type: ignore[arg-type]


def test_s48_bc7_08_assets_and_rp_channel() -> None:
    loader = Loader()
    result = assets(loader)
    assert result.emoji_strings == ["<a:dance:11>", "<:smile:22>"]
    assert (result.emojis, result.stickers, result.is_rp_channel) == (EMOJIS, STICKERS, False)

    rp = assets(loader, server=cafe(rp_channel_ids=(CHANNEL,)))
    assert (rp.emoji_strings, rp.emojis, rp.stickers, rp.is_rp_channel) == ([], None, None, True)


def test_bc7_08_thread_parent_rp_channel() -> None:
    server = cafe(rp_channel_ids=("444",))
    assert is_rp_channel(server, "999", "444") is True
    assert is_rp_channel(server, "999", None) is False
    assert is_rp_channel(server, "444") is True


def test_bc7_08_dm_missing_guild_or_serverless_persona_get_nothing() -> None:
    loader = Loader()
    for changes in (
        {"server": cafe(is_dm=True)},
        {"guild_available": False},
        {"persona": tomori(server_id=None)},
    ):
        result = assets(loader, **changes)
        assert (result.emoji_strings, result.emojis, result.stickers, result.is_rp_channel) == ([], None, None, False)
    assert loader.calls == 0


def test_bc7_08_disabled_kind_is_none_and_both_disabled_do_no_io() -> None:
    loader = Loader()
    stickers_only = assets(loader, server=cafe(emoji_usage_enabled=False))
    assert (stickers_only.emojis, stickers_only.stickers, stickers_only.emoji_strings) == (None, STICKERS, [])
    cache.clear()
    none = assets(Loader(fail=True), server=cafe(emoji_usage_enabled=False, sticker_usage_enabled=False))
    assert (none.emojis, none.stickers) == (None, None)
    assert cache.get(cache_key(1)) is None


def test_cache_hit_within_ttl_and_reload_after() -> None:
    loader = Loader()
    synced: list[int] = []
    assets(loader, sync_from_discord=synced.append)
    assets(loader, now_ms=NOW_MS + TTL_MS - 1, sync_from_discord=synced.append)
    assert (loader.calls, synced) == (1, [1])
    assets(loader, now_ms=NOW_MS + TTL_MS, sync_from_discord=synced.append)
    assert (loader.calls, synced) == (2, [1, 1])
    invalidate_server_assets(1)
    assets(loader, now_ms=NOW_MS + TTL_MS)
    assert loader.calls == 3


def test_failed_refresh_serves_the_stale_entry_or_empty_lists() -> None:
    assets(Loader())
    stale = assets(Loader(fail=True), now_ms=NOW_MS + 2 * TTL_MS)
    assert stale.emojis == EMOJIS
    cache.clear()
    empty = load_server_assets(
        1,
        now_ms=NOW_MS,
        ttl_minutes=10,
        emoji_enabled=True,
        sticker_enabled=False,
        sources=AssetSources(Loader(fail=True)),
    )
    assert empty == ([], None)


def test_emoji_strings_keep_row_order() -> None:
    assert emoji_strings([EmojiRow("2", "b"), EmojiRow("1", "a", is_animated=True)]) == ["<:b:2>", "<a:a:1>"]


@pytest.mark.django_db
def test_database_load_is_one_query_then_cached(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    server = Server.objects.create(server_disc_id="500000000000000009", name="Cafe")
    ServerEmoji.objects.create(server=server, emoji_disc_id="11", emoji_name="dance", is_animated=True)
    ServerEmoji.objects.create(server=server, emoji_disc_id="22", emoji_name="smile")
    ServerSticker.objects.create(server=server, sticker_disc_id="55", sticker_name="wave")
    ServerSticker.objects.create(server=server, sticker_disc_id="44", sticker_name="nod", sticker_desc="a nod")
    persona = replace(tomori(), server_id=server.server_id)
    fields = {
        "server": cafe(server_id=server.server_id),
        "persona": persona,
        "channel_id": CHANNEL,
        "config": StageConfig(),
    }
    with django_assert_num_queries(1):
        first = load_persona_assets(now_ms=NOW_MS, **fields)  # type: ignore[arg-type]
    with django_assert_num_queries(0):
        second = load_persona_assets(now_ms=NOW_MS + 1000, **fields)  # type: ignore[arg-type]
    assert first.emoji_strings == second.emoji_strings == ["<a:dance:11>", "<:smile:22>"]
    assert [(s.sticker_name, s.sticker_desc) for s in second.stickers or []] == [("wave", ""), ("nod", "a nod")]
