"""Media of a message: attachments, Components-V2 media, stickers, custom emoji, YouTube links and
link-preview images (BC3-15, BC3-18, BC3-19, BC6-05), collected as image/video references.

Only references are recorded here; whether a model may see them is decided per generation attempt
(BC7-05). Files that are not images or videos become text hints instead (BC3-18).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from chatcontext.core.notices import component_field
from chatcontext.core.types import Attachment, EmbedMedia, ImageRef, StickerRef, VideoRef

MediaKind = Literal["image", "video"]

# BC3-15
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "image/gif")
VIDEO_TYPES = (
    "video/mp4",
    "video/mpeg",
    "video/mov",
    "video/avi",
    "video/x-flv",
    "video/mpg",
    "video/webm",
    "video/wmv",
    "video/3gpp",
)
EXTENSION_TYPES: dict[str, tuple[MediaKind, str]] = {
    "png": ("image", "image/png"),
    "jpg": ("image", "image/jpeg"),
    "jpeg": ("image", "image/jpeg"),
    "webp": ("image", "image/webp"),
    "gif": ("image", "image/gif"),
    "heic": ("image", "image/heic"),
    "heif": ("image", "image/heif"),
    "mp4": ("video", "video/mp4"),
    "webm": ("video", "video/webm"),
    "mov": ("video", "video/quicktime"),
}
AUDIO_EXTENSIONS = frozenset({"aac", "flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "opus", "wav", "webm"})
# Container formats that are usually video; only a declared audio type makes them audio.
_VIDEO_CONTAINERS = frozenset({"mp4", "webm"})


def extension(name: str) -> str:
    path = urlparse(name).path if "://" in name else name
    return path.rsplit(".", 1)[-1].lower() if "." in path else ""


def media_type(content_type: str | None, name: str) -> tuple[MediaKind, str] | None:
    """BC3-15: (kind, mime) for a supported image/video; the extension decides only without a type."""
    if content_type:
        lowered = content_type.lower()
        if lowered.startswith(IMAGE_TYPES):
            return "image", content_type
        if lowered.startswith(VIDEO_TYPES):
            return "video", content_type
        return None
    return EXTENSION_TYPES.get(extension(name))


def is_audio_attachment(attachment: Attachment) -> bool:
    """BC3-18/BC11-01 audio test, shared by rendering and pre-hydration.

    [QUIRK] BC11-01: the reference treats every `.mp4`/`.webm` name as audio, so videos got sent to
    speech-to-text. Here a declared `audio/*` type decides; without a type only audio extensions
    count, and `.mp4`/`.webm` (video containers, already media by BC3-15) never do.
    """
    if attachment.content_type:
        return attachment.content_type.lower().startswith("audio/")
    ext = extension(attachment.name)
    return ext in AUDIO_EXTENSIONS and ext not in _VIDEO_CONTAINERS


@dataclass
class MediaBag:
    """Image/video references of one source, de-duplicated by url and proxy url."""

    source_message_id: str | None = None
    images: list[ImageRef] = field(default_factory=list)
    videos: list[VideoRef] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.images) + len(self.videos)

    def _claim(self, url: str, proxy_url: str) -> bool:
        if url in self._seen or proxy_url in self._seen:
            return False
        self._seen.update({url, proxy_url})
        return True

    def add_image(self, url: str, proxy_url: str, mime: str | None, filename: str, *, is_emoji: bool = False) -> None:
        if self._claim(url, proxy_url):
            self.images.append(ImageRef(url, proxy_url, mime, filename, is_emoji, self.source_message_id))

    def add_video(self, url: str, proxy_url: str, mime: str | None, filename: str, *, youtube: bool = False) -> None:
        if self._claim(url, proxy_url):
            self.videos.append(VideoRef(url, proxy_url, mime, filename, youtube, self.source_message_id))

    def add(self, kind: MediaKind, url: str, proxy_url: str, mime: str, filename: str) -> None:
        if kind == "image":
            self.add_image(url, proxy_url, mime, filename)
        else:
            self.add_video(url, proxy_url, mime, filename)

    def extend(self, other: MediaBag) -> None:
        self.images.extend(other.images)
        self.videos.extend(other.videos)


def add_attachments(bag: MediaBag, attachments: Iterable[Attachment]) -> list[Attachment]:
    """Adds supported images/videos; returns the other attachments (audio and files, BC3-18)."""
    others: list[Attachment] = []
    for attachment in attachments:
        typed = media_type(attachment.content_type, attachment.name)
        if typed is None:
            others.append(attachment)
        else:
            bag.add(typed[0], attachment.url, attachment.proxy_url or attachment.url, typed[1], attachment.name)
    return others


def _component_media(node: Any) -> Iterable[Mapping[str, Any]]:
    """Media dicts of a CV2 tree: MediaGallery items, Thumbnail/File media, Section accessories."""
    for key in ("media", "file"):
        media = component_field(node, key)
        if isinstance(media, Mapping):
            yield media
    for item in component_field(node, "items") or ():
        media = component_field(item, "media")
        if isinstance(media, Mapping):
            yield media
    accessory = component_field(node, "accessory")
    if accessory is not None:
        yield from _component_media(accessory)
    for child in component_field(node, "components") or ():
        yield from _component_media(child)


def add_component_media(bag: MediaBag, components: Iterable[Any], attachments: Iterable[Attachment]) -> None:
    """BC3-18: supported media of a CV2 tree, recursively; `attachment://name` resolves to the
    message's attachment of that name."""
    by_name = {a.name: a for a in attachments}
    for root in components:
        for media in _component_media(root):
            url = str(media.get("url") or "")
            if url.startswith("attachment://"):
                attachment = by_name.get(url.removeprefix("attachment://"))
                if attachment is None:
                    continue
                url, proxy, content_type, name = (
                    attachment.url,
                    attachment.proxy_url or attachment.url,
                    attachment.content_type,
                    attachment.name,
                )
            else:
                proxy = str(media.get("proxy_url") or url)
                content_type = media.get("content_type")
                name = urlparse(url).path.rsplit("/", 1)[-1]
            typed = media_type(content_type, name) if url else None
            if typed is not None:
                bag.add(typed[0], url, proxy, typed[1], name)


def add_stickers(bag: MediaBag, stickers: Iterable[StickerRef]) -> None:
    """BC3-19: stickers as PNG image references."""
    for sticker in stickers:
        url = f"https://cdn.discordapp.com/stickers/{sticker.id}.png"
        bag.add_image(url, url, "image/png", f"{sticker.name}.png")


_CUSTOM_EMOJI = re.compile(r"<a?:(\w+):(\d{17,20})>")


def add_custom_emojis(bag: MediaBag, content: str) -> None:
    """BC3-19: custom emoji of the original content, first occurrence per id."""
    for name, emoji_id in _CUSTOM_EMOJI.findall(content):
        url = f"https://cdn.discordapp.com/emojis/{emoji_id}.png"
        bag.add_image(url, url, "image/png", f"emoji_{name}_{emoji_id}.png", is_emoji=True)


_YOUTUBE_ID = r"([A-Za-z0-9_-]{11})"
_YOUTUBE_PATTERNS = tuple(
    re.compile(pattern + _YOUTUBE_ID)
    for pattern in (
        r"(?:https?://)?(?:www\.|m\.)?youtube\.com/watch\?v=",
        r"(?:https?://)?youtu\.be/",
        r"(?:https?://)?(?:www\.|m\.)?youtube\.com/embed/",
        r"(?:https?://)?(?:www\.|m\.)?youtube\.com/shorts/",
    )
)


def add_youtube(bag: MediaBag, content: str) -> None:
    """BC3-19: the first pattern (in order) that matches contributes exactly one video."""
    if "youtu" not in content:  # every pattern holds it (case-sensitive): most messages skip the scan
        return
    for pattern in _YOUTUBE_PATTERNS:
        match = pattern.search(content)
        if match:
            text = match.group(0)
            bag.add_video(text, text, "video/youtube", f"youtube_video_{match.group(1)}.mp4", youtube=True)
            return


_SIZE_SUFFIX = re.compile(r":(large|medium|small|orig)$")
_PREVIEW_MIME = {"png": "image/png", "gif": "image/gif", "webp": "image/webp"}


def add_embed_image(bag: MediaBag, media: EmbedMedia) -> None:
    """BC6-05: a link preview's image/thumbnail; filename from the URL path (size suffix removed)."""
    filename = _SIZE_SUFFIX.sub("", urlparse(media.url).path.rsplit("/", 1)[-1]) or "embed_image"
    if "." not in filename:
        filename += ".jpg"
    mime = _PREVIEW_MIME.get(extension(filename), "image/jpeg")
    bag.add_image(media.url, media.proxy_url or media.url, mime, filename)
