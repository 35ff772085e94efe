"""Images reach a vision model: the capability-aware adapter of build-context.md §7.3 (BC7-05).

The pipeline leaves ``MediaDescriptor``s on the prompt's items and never decides whether the model can
see them. Here, per turn, ``resolve_images`` decides with the server's ``ImagePolicy``: when its model
accepts images, the image descriptors of user messages, newest first up to the per-turn limit, are
fetched by the surface's ``ImageFetcher`` (Discord's CDN for the bot, the stored upload in the
playground) within a size and a time budget, and added to their item as ``ImagePart``s (data URLs),
which ``to_chat_messages`` sends as OpenAI ``image_url`` parts. An image that is not sent keeps the
text hint the pipeline wrote, and the record says why. Stickers are images like any other; a GIF is
sent as its first frame (PNG), which is what a model sees of an animation anyway. What an image is comes
from its bytes (``image_bytes``), never from the declared type: only an image Pillow opens, within the
pixel bound, and decodes is sent, with the type Pillow found. Any failure of one image — a fetch, a
decoder — makes it "not sent" with the reason; it never fails the turn.

The record (``PromptRecord.images``) keeps the descriptor, size and content type of what was sent and
never the bytes. Logs carry counts and failure kinds only.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
from django.conf import settings

from bot.conversation.image_bytes import ImageRefused, opened_image
from chatcontext.core.types import ContextItem, ImagePart, MediaDescriptor
from personas.models import ServerSettings

logger = logging.getLogger(__name__)

# OpenAI-compatible vision endpoints take PNG, JPEG and WebP; a GIF becomes its first frame as PNG.
GIF = "image/gif"
CHUNK_BYTES = 64 * 1024
DISCORD_MEDIA_HOST_SUFFIXES = (".discordapp.com", ".discordapp.net", ".discord.com")


@dataclass(frozen=True)
class ImagePolicy:
    """A server's image settings (``personas.ServerSettings``) and the fetch time budget."""

    accepts_images: bool = False
    max_images: int = 4
    max_bytes: int = 4 * 1024 * 1024
    timeout_s: float = 10.0

    @classmethod
    def of(cls, server_settings: ServerSettings | None) -> ImagePolicy:
        if server_settings is None:
            return cls(timeout_s=settings.MEDIA_FETCH_TIMEOUT_SECONDS)
        return cls(
            accepts_images=server_settings.model_accepts_images,
            max_images=server_settings.max_images_per_turn,
            max_bytes=server_settings.max_image_bytes,
            timeout_s=settings.MEDIA_FETCH_TIMEOUT_SECONDS,
        )


@dataclass(frozen=True)
class FetchedImage:
    data: bytes
    preview_url: str  # where a moderator's page shows it (the CDN url, the playground's upload view)


@dataclass(frozen=True)
class SendableImage:
    data: bytes
    content_type: str  # what Pillow found in the bytes
    preview_url: str


class ImageFetcher(Protocol):
    async def fetch(self, url: str, *, max_bytes: int) -> FetchedImage:
        """The image at ``url``, at most ``max_bytes`` read; raises ``ImageRefused``."""


def is_discord_media_url(url: str) -> bool:
    parts = urlsplit(url)
    host = parts.hostname or ""
    return parts.scheme == "https" and any(host.endswith(suffix) for suffix in DISCORD_MEDIA_HOST_SUFFIXES)


class HttpImageFetcher:
    """Reads an image over HTTP(S), only from addresses ``allow`` accepts (Discord's media servers:
    a message's link can name any address, and the bot must not fetch inside its own network).

    A declared ``Content-Length`` over the budget is refused before the body is read; the body is
    counted as it arrives and the download stops at the budget, so a 20 MB image costs at most the
    budget. Redirects are not followed (they could leave the allowed hosts).
    """

    def __init__(self, *, allow: Callable[[str], bool] = is_discord_media_url) -> None:
        self.allow = allow

    async def fetch(self, url: str, *, max_bytes: int) -> FetchedImage:
        if not self.allow(url):
            raise ImageRefused("not on Discord's media servers")
        try:
            async with aiohttp.ClientSession() as session, session.get(url, allow_redirects=False) as response:
                if response.status != 200:
                    raise ImageRefused(f"HTTP {response.status}")
                if response.content_length is not None and response.content_length > max_bytes:
                    raise ImageRefused("too large")
                data = bytearray()
                async for chunk in response.content.iter_chunked(CHUNK_BYTES):
                    data += chunk
                    if len(data) > max_bytes:
                        raise ImageRefused("too large")
        except aiohttp.ClientError as exc:
            raise ImageRefused(f"unreachable ({type(exc).__name__})") from exc
        return FetchedImage(bytes(data), url)


@dataclass
class ImageResolution:
    """The prompt as sent (items with their image parts) and what the record keeps of it."""

    items: list[ContextItem]
    record: dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class _Candidate:
    item_index: int
    descriptor: MediaDescriptor
    message_id: str | None


def _entry(candidate: _Candidate, **extra: Any) -> dict[str, Any]:
    d = candidate.descriptor
    return {
        "media_id": d.media_id,
        "message_id": candidate.message_id,
        "kind": d.kind,
        "filename": d.filename,
        "uri": d.uri or d.fallback_uri or "",
        **extra,
    }


def _sendable(fetched: FetchedImage) -> SendableImage:
    """The image as the model takes it, decoded once here so a body the model's server could not read
    is refused now (the pixels are bounded, ``image_bytes``): a GIF as its first frame in PNG."""
    with opened_image(fetched.data) as (image, inspected):
        if inspected.content_type != GIF:
            image.load()
            return SendableImage(fetched.data, inspected.content_type, fetched.preview_url)
        image.seek(0)
        out = io.BytesIO()
        image.convert("RGBA").save(out, format="PNG")
    return SendableImage(out.getvalue(), "image/png", fetched.preview_url)


async def _fetch(fetcher: ImageFetcher, candidate: _Candidate, policy: ImagePolicy) -> SendableImage:
    descriptor = candidate.descriptor
    urls = [u for u in dict.fromkeys([descriptor.uri, descriptor.fallback_uri or ""]) if u]
    if not urls:
        raise ImageRefused("no url")
    refusal = ImageRefused("no url")
    for url in urls:  # the proxy url first, then the original (BC7-05)
        try:
            async with asyncio.timeout(policy.timeout_s):
                fetched = await fetcher.fetch(url, max_bytes=policy.max_bytes)
            return await asyncio.to_thread(_sendable, fetched)
        except TimeoutError:
            refusal = ImageRefused("timed out")
        except ImageRefused as exc:
            refusal = exc
    raise refusal


def _candidates(items: Sequence[ContextItem]) -> list[_Candidate]:
    """Every descriptor of the prompt, newest first."""
    found = []
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        for descriptor in reversed(item.media_descriptors or []):
            found.append(_Candidate(index, descriptor, item.message_id))
    return found


async def resolve_images(
    items: Sequence[ContextItem], policy: ImagePolicy, fetcher: ImageFetcher | None
) -> ImageResolution:
    """The prompt with the images the model gets, newest first up to the policy's limit."""
    sent: list[dict[str, Any]] = []
    not_sent: list[dict[str, Any]] = []
    chosen: list[_Candidate] = []
    for candidate in _candidates(items):
        d = candidate.descriptor
        if d.kind != "image":
            reason = "videos are not sent"
        elif not policy.accepts_images:
            reason = "the server's model does not accept images"
        elif fetcher is None:
            reason = "this surface fetches no images"
        elif not d.within_window:
            reason = "outside the media window"
        elif items[candidate.item_index].role != "user":
            reason = "not in a user message (the API takes images there only)"
        elif len(chosen) >= policy.max_images:
            reason = "over the images-per-turn limit"
        else:
            chosen.append(candidate)
            continue
        not_sent.append(_entry(candidate, reason=reason))
    if not chosen or fetcher is None:
        return ImageResolution(list(items), {"sent": sent, "not_sent": not_sent})

    outcomes = await asyncio.gather(*(_fetch(fetcher, c, policy) for c in chosen), return_exceptions=True)
    parts: dict[int, list[ImagePart]] = {}
    for candidate, outcome in zip(chosen, outcomes, strict=True):
        if isinstance(outcome, ImageRefused):
            not_sent.append(_entry(candidate, reason=str(outcome)))
            continue
        if isinstance(outcome, Exception):  # one image's failure is never the turn's
            logger.warning("image not sent: %s", type(outcome).__name__)
            not_sent.append(_entry(candidate, reason=f"failed ({type(outcome).__name__})"))
            continue
        if isinstance(outcome, BaseException):
            raise outcome
        data_url = f"data:{outcome.content_type};base64,{base64.b64encode(outcome.data).decode('ascii')}"
        parts.setdefault(candidate.item_index, []).insert(0, ImagePart(uri=data_url, mime_type=outcome.content_type))
        sent.append(
            _entry(
                candidate, content_type=outcome.content_type, size=len(outcome.data), preview_url=outcome.preview_url
            )
        )
    logger.info("images: %d sent, %d not sent", len(sent), len(not_sent))
    resolved = [
        replace(item, parts=[*item.parts, *parts[index]]) if index in parts else item
        for index, item in enumerate(items)
    ]
    return ImageResolution(resolved, {"sent": sent, "not_sent": not_sent})
