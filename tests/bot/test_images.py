"""Images reach a vision model (issue 18; build-context.md BC7-05: the builder's media descriptors are
resolved per turn by ``bot.conversation.media``). The local OpenAI-compatible server shows what the
model received; a local HTTP server stands in for Discord's CDN."""

from __future__ import annotations

import asyncio
import base64
import io

import discord.ext.test as dpytest
import pytest
from PIL import Image

from bot.conversation.image_bytes import NOT_AN_IMAGE, TOO_MANY_PIXELS
from bot.conversation.media import (
    FetchedImage,
    HttpImageFetcher,
    ImagePolicy,
    ImageRefused,
    is_discord_media_url,
    resolve_images,
)
from bot.conversation.providers import to_chat_messages
from chatcontext.core.types import ContextItem, ImagePart, MediaDescriptor, TextPart
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fakes import run_db, setup_server
from tests.bot.image_server import GARBAGE, HUGE_BYTES, animated_gif_bytes, bomb_gif_bytes, png_bytes

VISION = ImagePolicy(accepts_images=True, max_images=2, max_bytes=64 * 1024, timeout_s=5.0)
LOCAL = HttpImageFetcher(allow=lambda url: url.startswith("http://127.0.0.1:"))


def image(media_id: str, uri: str, *, kind: str = "image", within_window: bool = True) -> MediaDescriptor:
    return MediaDescriptor(
        kind=kind,  # type: ignore[arg-type]
        uri=uri,
        mime_type="image/png",
        media_id=media_id,
        within_window=within_window,
        filename=uri.rsplit("/", 1)[-1],
    )


def entry(role: str, text: str, *descriptors: MediaDescriptor, message_id: str = "1") -> ContextItem:
    return ContextItem(
        role=role,  # type: ignore[arg-type]
        parts=[TextPart(text)],
        message_id=message_id,
        media_descriptors=list(descriptors) or None,
    )


class DictFetcher:
    """Serves fixed bytes by url; anything else is refused as a CDN 404 would be."""

    def __init__(self, images: dict[str, bytes]) -> None:
        self.images = images
        self.asked: list[str] = []

    async def fetch(self, url: str, *, max_bytes: int) -> FetchedImage:
        self.asked.append(url)
        if url not in self.images:
            raise ImageRefused("HTTP 404")
        return FetchedImage(self.images[url], url)


def image_parts(item: ContextItem) -> list[ImagePart]:
    return [p for p in item.parts if isinstance(p, ImagePart)]


async def test_bc7_05_images_go_newest_first_up_to_the_limit_on_the_message_they_belong_to():
    items = [
        entry("system", "You are Tomori."),
        entry("user", "Ann: old one", image("media_1", "https://cdn/a.png"), message_id="10"),
        entry("model", "Tomori: nice", image("media_2", "https://cdn/sticker.png"), message_id="11"),
        entry("user", "Bob: two", image("media_3", "https://cdn/b.png"), image("media_3", "https://cdn/c.png")),
        entry("user", "Ann: clip", image("media_4", "https://cdn/v.mp4", kind="video")),
    ]
    fetcher = DictFetcher({f"https://cdn/{n}.png": png_bytes() for n in "abc"})

    resolved = await resolve_images(items, VISION, fetcher)

    assert [len(image_parts(i)) for i in resolved.items] == [0, 0, 0, 2, 0]
    assert all(p.uri.startswith("data:image/png;base64,") for p in image_parts(resolved.items[3]))
    assert [e["filename"] for e in resolved.record["sent"]] == ["c.png", "b.png"]
    assert resolved.record["sent"][0]["size"] == len(png_bytes())
    assert resolved.record["sent"][0]["content_type"] == "image/png"
    assert "data:" not in str(resolved.record)  # the record never keeps the bytes
    reasons = {e["filename"]: e["reason"] for e in resolved.record["not_sent"]}
    assert reasons == {
        "v.mp4": "videos are not sent",
        "sticker.png": "not in a user message (the API takes images there only)",
        "a.png": "over the images-per-turn limit",
    }
    assert items[3].parts == [TextPart("Bob: two")]  # the context of record is left as it was
    # The text hint stays beside the image: the item's text is unchanged.
    assert to_chat_messages(resolved.items)[3]["content"][0] == {"type": "text", "text": "Bob: two"}


async def test_bc7_05_a_text_only_model_gets_no_images_and_the_record_says_why():
    items = [entry("user", "Ann: look", image("media_1", "https://cdn/a.png"))]
    fetcher = DictFetcher({"https://cdn/a.png": png_bytes()})

    resolved = await resolve_images(items, ImagePolicy(accepts_images=False), fetcher)

    assert resolved.items == items and fetcher.asked == []
    assert resolved.record == {
        "sent": [],
        "not_sent": [
            {
                "media_id": "media_1",
                "message_id": "1",
                "kind": "image",
                "filename": "a.png",
                "uri": "https://cdn/a.png",
                "reason": "the server's model does not accept images",
            }
        ],
    }


async def test_a_failed_fetch_tries_the_original_url_then_keeps_the_hint():
    proxied = MediaDescriptor(
        "image", "https://proxy/a.png", "image/png", "media_1", True, "a.png", "https://cdn/a.png"
    )
    items = [entry("user", "Ann: look", proxied), entry("user", "Bob: gone", image("media_2", "https://cdn/gone.png"))]
    fetcher = DictFetcher({"https://cdn/a.png": png_bytes()})

    resolved = await resolve_images(items, VISION, fetcher)

    assert len(image_parts(resolved.items[0])) == 1 and image_parts(resolved.items[1]) == []
    assert fetcher.asked.count("https://proxy/a.png") == 1 and "https://cdn/a.png" in fetcher.asked
    assert resolved.record["not_sent"] == [{**resolved.record["not_sent"][0], "reason": "HTTP 404"}]


async def test_a_fetch_over_the_time_budget_is_not_sent():
    class Stalled:
        async def fetch(self, url: str, *, max_bytes: int) -> FetchedImage:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    items = [entry("user", "Ann: look", image("media_1", "https://cdn/a.png"))]
    policy = ImagePolicy(accepts_images=True, timeout_s=0.01)

    resolved = await resolve_images(items, policy, Stalled())

    assert resolved.record["sent"] == [] and resolved.record["not_sent"][0]["reason"] == "timed out"


async def test_a_gif_is_sent_as_its_first_frame(image_server):
    items = [entry("user", "Ann: funny", image("media_1", image_server.url("anim.gif")))]

    resolved = await resolve_images(items, VISION, LOCAL)

    [part] = image_parts(resolved.items[0])
    assert part.mime_type == "image/png"
    frame = Image.open(io.BytesIO(base64.b64decode(part.uri.split(",", 1)[1])))
    assert frame.format == "PNG" and frame.convert("RGB").getpixel((0, 0)) == (0, 0, 255)  # the first, blue frame


@pytest.mark.parametrize("path", ["huge-declared.png", "huge-chunked.png"])
async def test_a_20_mb_image_is_refused_by_the_budget_not_downloaded_whole(image_server, path):
    with pytest.raises(ImageRefused, match="too large"):
        await LOCAL.fetch(image_server.url(path), max_bytes=VISION.max_bytes)
    await asyncio.sleep(0)  # let the server notice the hang-up
    assert image_server.served[f"/{path}"] < HUGE_BYTES


async def test_only_discords_media_servers_are_fetched_by_default(image_server):
    assert is_discord_media_url("https://cdn.discordapp.com/attachments/1/2/a.png")
    assert is_discord_media_url("https://media.discordapp.net/attachments/1/2/a.png")
    assert not is_discord_media_url("http://cdn.discordapp.com/a.png")
    assert not is_discord_media_url("https://discordapp.com.evil.example/a.png")
    with pytest.raises(ImageRefused, match="not on Discord's media servers"):
        await HttpImageFetcher().fetch(image_server.url("small.png"), max_bytes=VISION.max_bytes)
    with pytest.raises(ImageRefused, match="HTTP 404"):
        await LOCAL.fetch(image_server.url("missing.png"), max_bytes=VISION.max_bytes)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("vision", [True, False])
async def test_the_model_server_receives_image_url_parts_only_for_a_vision_server(
    harness, llm_server, image_server, vision
):
    def configure() -> None:
        setup_server(harness.guild)
        m.ServerSettings.objects.filter(server__server_disc_id=str(harness.guild.id)).update(
            llm_provider="openai", llm_base_url=llm_server.base_url, llm_model="ok", model_accepts_images=vision
        )

    await run_db(configure)

    await dpytest.message(
        "tomori, what does this say?", member=harness.member(0), attachments=[image_server.url("small.png")]
    )

    [record] = [r async for r in PromptRecord.objects.all()]
    [user_message] = [
        msg for msg in llm_server.requests[-1]["messages"] if "what does this say?" in str(msg["content"])
    ]
    if vision:
        [url] = llm_server.image_urls()
        assert url == "data:image/png;base64," + base64.b64encode(png_bytes()).decode()
        assert user_message["content"][-1] == {"type": "image_url", "image_url": {"url": url}}
        [sent] = record.images["sent"]
        assert sent["filename"] == "small.png" and sent["size"] == len(png_bytes())
        assert sent["preview_url"] == image_server.url("small.png") and record.images["not_sent"] == []
    else:
        assert llm_server.image_urls() == [] and isinstance(user_message["content"], str)
        assert "Media ID: media_1" in user_message["content"]  # the text hint stays
        [not_sent] = record.images["not_sent"]
        assert not_sent["reason"] == "the server's model does not accept images"


async def test_what_is_sent_is_what_the_bytes_are_not_what_the_source_declared():
    """Issue 26 items 2 and 16: a decompression bomb, garbage and a GIF declared ``image/png`` (the
    ``DictFetcher`` declares nothing: the type comes from the bytes)."""
    items = [
        entry("user", "Ann: bomb", image("media_1", "https://cdn/bomb.png"), message_id="1"),
        entry("user", "Ann: garbage", image("media_2", "https://cdn/garbage.png"), message_id="2"),
        entry("user", "Ann: big", image("media_3", "https://cdn/big.gif"), message_id="3"),
        entry("user", "Ann: anim", image("media_4", "https://cdn/anim.png"), message_id="4"),
        # 36 M pixels: over MAX_IMAGE_PIXELS (25 M) but under twice it, where Pillow itself only warns.
        entry("user", "Ann: band", image("media_5", "https://cdn/band.gif"), message_id="5"),
    ]
    fetcher = DictFetcher(
        {
            "https://cdn/bomb.png": bomb_gif_bytes(),
            "https://cdn/garbage.png": GARBAGE,
            "https://cdn/big.gif": bomb_gif_bytes(12000, 12000),
            "https://cdn/anim.png": animated_gif_bytes(),
            "https://cdn/band.gif": bomb_gif_bytes(6000, 6000),
        }
    )

    resolved = await resolve_images(items, ImagePolicy(accepts_images=True, max_images=5), fetcher)

    reasons = {e["filename"]: e["reason"] for e in resolved.record["not_sent"]}
    assert reasons == {
        "bomb.png": TOO_MANY_PIXELS,
        "garbage.png": NOT_AN_IMAGE,
        "big.gif": TOO_MANY_PIXELS,
        "band.gif": TOO_MANY_PIXELS,
    }
    [sent] = resolved.record["sent"]
    assert sent["filename"] == "anim.png" and sent["content_type"] == "image/png"
    assert [p.mime_type for p in image_parts(resolved.items[3])] == ["image/png"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("path", "reason"), [("bomb.gif", TOO_MANY_PIXELS), ("garbage.png", NOT_AN_IMAGE)])
async def test_a_bomb_or_garbage_attachment_is_not_sent_and_the_turn_still_answers(
    harness, llm_server, image_server, path, reason
):
    """Issue 26 items 2 and 16 on Discord: the 29-byte GIF declaring 65535×65535 made the turn fail
    with no record and no notice; garbage declared ``image/png`` went to the model as a PNG."""

    def configure() -> None:
        setup_server(harness.guild)
        m.ServerSettings.objects.filter(server__server_disc_id=str(harness.guild.id)).update(
            llm_provider="openai", llm_base_url=llm_server.base_url, llm_model="ok", model_accepts_images=True
        )

    await run_db(configure)

    await dpytest.message("tomori, look", member=harness.member(0), attachments=[image_server.url(path)])

    [record] = [r async for r in PromptRecord.objects.all()]
    assert not record.error and len(llm_server.requests) == 1 and llm_server.image_urls() == []
    [not_sent] = record.images["not_sent"]
    assert not_sent["filename"] == path and not_sent["reason"] == reason
    assert not dpytest.sent_queue.empty()  # the persona answered
