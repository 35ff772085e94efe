"""Capability-neutral media descriptors and the rendered-image limit (build-context.md §7.3).

BC7-05: the builder never decides whether the answering model can see images. Per dialogue entry it
records `MediaDescriptor`s (resolved into real image/video parts later, per generation attempt and
routed model), a budget notice for images skipped by `MEDIA_IMAGE_MESSAGE_LIMIT` (BC7-06) and an
attribution hint that tells the model which opaque `media_N` id owns the media.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chatcontext.core.frames import system_frame
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.types import ImageRef, MediaDescriptor, SimplifiedMessage, VideoRef

_IMAGE_MIME_BY_EXTENSION = {"png": "image/png", "gif": "image/gif", "webp": "image/webp", "heic": "image/heic"}
_VIDEO_MIME_BY_EXTENSION = {"webm": "video/webm", "mov": "video/mov"}


@dataclass
class EntryMedia:
    """What one dialogue entry contributes besides its text."""

    descriptors: list[MediaDescriptor] = field(default_factory=list)
    omitted_notice: str | None = None
    attribution_hint: str | None = None


def is_sticker_image(image: ImageRef) -> bool:
    return "/stickers/" in image.proxy_url or "/stickers/" in image.url


def is_counted_image(image: ImageRef) -> bool:
    """BC7-05: images that count toward the rendered-image limit (not emoji, not stickers)."""
    return not image.is_emoji and not is_sticker_image(image)


def media_window(fetch_limit: int, memory_pressure_window: int | None = None) -> int:
    """BC7-05: `min(memory-pressure media window, normalized fetch limit)`."""
    return fetch_limit if memory_pressure_window is None else min(memory_pressure_window, fetch_limit)


def _extension(filename: str) -> str:
    return filename.rsplit(".", 1)[-1].lower() if "." in filename else ""


def _image_mime(image: ImageRef) -> str:
    return image.mime_type or _IMAGE_MIME_BY_EXTENSION.get(_extension(image.filename), "image/jpeg")


def _rendered_indices(history: Sequence[SimplifiedMessage], cutoff: int, limit: int) -> set[int]:
    """The `limit` most recent in-window entries that have counted images."""
    rendered: set[int] = set()
    if limit <= 0:
        return rendered
    for index in range(len(history) - 1, max(cutoff, 0) - 1, -1):
        if any(is_counted_image(img) for img in history[index].image_attachments):
            rendered.add(index)
            if len(rendered) >= limit:
                break
    return rendered


def _last_duplicate_index(history: Sequence[SimplifiedMessage], rendered: set[int]) -> dict[str, int]:
    """Proxy url → index of its last rendered occurrence, for urls rendered more than once."""
    occurrences: dict[str, list[int]] = {}
    for index in sorted(rendered):
        for img in history[index].image_attachments:
            if is_counted_image(img):
                occurrences.setdefault(img.proxy_url, []).append(index)
    return {url: max(indices) for url, indices in occurrences.items() if len(indices) > 1}


def omitted_images_notice(count: int) -> str:
    """BC7-06: the detached notice for counted images skipped by the rendered-image limit."""
    if count == 1:
        return "[System: 1 image omitted due to rendered-image limit. Do not claim to see it.]"
    return f"[System: {count} images omitted due to rendered-image limit. Do not claim to see them.]"


def attribution_hint(
    entry: SimplifiedMessage,
    id_map: MessageIdMap,
    author: str,
    *,
    images: Sequence[ImageRef] | None = None,
    videos: Sequence[VideoRef] | None = None,
) -> str | None:
    """BC7-06: `[System: This image (Media ID: media_1) was sent by Ann]` and its variants.

    ``images``/``videos`` are the media that actually render (the planner passes them); media the
    rendered-image limit or de-duplication left out are not attributed, so the hint never
    contradicts the "Do not claim to see it" notice beside it. Default: all of the entry's media.
    """
    images = [img for img in (entry.image_attachments if images is None else images) if not img.is_emoji]
    videos = list(entry.video_attachments if videos is None else videos)
    total = len(images) + len(videos)
    if total == 0:
        return None
    source_ids = list(
        dict.fromkeys([img.source_message_id or entry.id for img in images])
        | dict.fromkeys([vid.source_message_id or entry.id for vid in videos])
    )
    if images and not videos:
        noun = "image" if len(images) == 1 else "images"
    elif videos and not images:
        noun = "video" if len(videos) == 1 else "videos"
    else:
        noun = "media files"
    ids = ", ".join(id_map.register(source_id, "media") for source_id in source_ids)
    label = "Media ID" if len(source_ids) == 1 else "Media IDs"
    this, was = ("This", "was") if total == 1 else ("These", "were")
    if entry.remote_media_source_kind == "forwarded":
        tail = "attached to the forwarded message described above"
    elif entry.id not in source_ids:
        tail = "included in the message being replied to"
    else:
        tail = f"sent by {author}"
    return system_frame(f"{this} {noun} ({label}: {ids}) {was} {tail}")


def media_attribution_text(entry: SimplifiedMessage, author: str) -> str:
    """Text of a media-only entry without a hint: `[System: Ann sent this image]` and variants."""
    image_count = len(entry.image_attachments)
    video_count = len(entry.video_attachments)
    has_gif = any("gif" in (img.mime_type or "") for img in entry.image_attachments)
    parts: list[str] = []
    if image_count:
        if has_gif:
            parts.append("this GIF" if image_count == 1 else f"these {image_count} images (including a GIF)")
        else:
            parts.append("this image" if image_count == 1 else f"these {image_count} images")
    if video_count:
        if image_count:
            parts.append("a video" if video_count == 1 else f"{video_count} videos")
        else:
            parts.append("this video" if video_count == 1 else f"these {video_count} videos")
    return system_frame(f"{author} sent {' and '.join(parts) or 'this media'}")


def plan_history_media(
    history: Sequence[SimplifiedMessage],
    *,
    window: int,
    image_message_limit: int,
    id_map: MessageIdMap,
    author_label: Callable[[SimplifiedMessage], str],
) -> list[EntryMedia]:
    """BC7-05/06 for a whole history, one `EntryMedia` per entry (same order).

    Ids are registered entry by entry, descriptors before the hint, so `media_N` numbering follows the
    history order (BC5-04). Emoji images never become descriptors; stickers are never limited.
    """
    cutoff = len(history) - window
    rendered = _rendered_indices(history, cutoff, image_message_limit)
    last_duplicate = _last_duplicate_index(history, rendered)
    plans: list[EntryMedia] = []
    for index, entry in enumerate(history):
        plan = EntryMedia()
        in_window = index >= cutoff
        skipped = 0
        rendered_images: list[ImageRef] = []
        for img in entry.image_attachments:
            if img.is_emoji:
                continue
            counted = is_counted_image(img)
            if in_window and counted and index not in rendered:
                skipped += 1
                continue
            if in_window and counted and last_duplicate.get(img.proxy_url, index) != index:
                continue  # the same image renders in a later entry: last occurrence wins
            rendered_images.append(img)
            plan.descriptors.append(
                MediaDescriptor(
                    kind="image",
                    uri=img.proxy_url or img.url,
                    mime_type=_image_mime(img),
                    media_id=id_map.register(img.source_message_id or entry.id, "media"),
                    within_window=in_window,
                    filename=img.filename,
                    fallback_uri=img.url if img.proxy_url and img.url != img.proxy_url else None,
                )
            )
        for vid in entry.video_attachments:
            plan.descriptors.append(
                MediaDescriptor(
                    kind="video",
                    uri=vid.url if vid.is_youtube_link else (vid.proxy_url or vid.url),
                    mime_type=vid.mime_type or _VIDEO_MIME_BY_EXTENSION.get(_extension(vid.filename), "video/mp4"),
                    media_id=id_map.register(vid.source_message_id or entry.id, "media"),
                    within_window=in_window,
                    filename=vid.filename,
                    is_youtube_link=vid.is_youtube_link,
                )
            )
        if skipped:
            plan.omitted_notice = omitted_images_notice(skipped)
        if in_window:
            plan.attribution_hint = attribution_hint(
                entry, id_map, author_label(entry), images=rendered_images, videos=entry.video_attachments
            )
        plans.append(plan)
    return plans
