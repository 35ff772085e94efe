"""The playground's ``ImageFetcher``: a vision model's images are read from the stored uploads.

A playground attachment reaches the pipeline as a ``file://`` url under the upload directory
(``store.attachment_url``); nothing else is read, so a message cannot point the turn at another file.
Pages show the image through the playground's attachment view.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from asgiref.sync import sync_to_async
from django.urls import reverse

from bot.conversation.media import FetchedImage, ImageRefused
from bot.playground import store


def stored_upload(url: str) -> tuple[Path, str, str]:
    """(file, message id, attachment id) of a stored upload's url; raises ``ImageRefused``."""
    parts = urlsplit(url)
    if parts.scheme != "file":
        raise ImageRefused("not a playground upload")
    root = store.upload_root().resolve()
    path = Path(unquote(parts.path)).resolve()
    if not path.is_relative_to(root):
        raise ImageRefused("not a playground upload")
    relative = path.relative_to(root).parts
    if len(relative) != 2 or "-" not in relative[1]:  # <message id>/<attachment id>-<name> (store._save_uploads)
        raise ImageRefused("not a playground upload")
    return path, relative[0], relative[1].split("-", 1)[0]


def _read(path: Path, max_bytes: int) -> bytes:
    if not path.is_file():
        raise ImageRefused("upload is gone")
    if path.stat().st_size > max_bytes:
        raise ImageRefused("too large")
    return path.read_bytes()


class UploadImageFetcher:
    async def fetch(self, url: str, *, max_bytes: int) -> FetchedImage:
        path, message_id, attachment_id = stored_upload(url)
        data = await sync_to_async(_read)(path, max_bytes)
        preview = reverse("playground:attachment", args=[message_id, attachment_id])
        return FetchedImage(data, preview)
