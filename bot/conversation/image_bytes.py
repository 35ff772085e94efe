"""What an image from outside really is, from its bytes: the one rule for playground uploads, the
playground's attachment view and the images sent to a vision model (Discord attachments included).

A declared type (a multipart ``content_type``, an HTTP ``Content-Type``, a file name) is the sender's
word and is never believed: a ``text/html`` page or an SVG named ``.png`` would run script when served
inline, and garbage declared ``image/png`` would reach the model as an image. Pillow reads the header
only (``Image.open`` decodes no pixels) and may try just the raster formats listed here, so no other
parser (EPS through Ghostscript, say) ever sees hostile bytes. Decoded pixels are bounded by the
``MAX_IMAGE_PIXELS`` setting, which ``bot.apps`` hands to Pillow (``Image.MAX_IMAGE_PIXELS``): an image
declaring more, like a 29-byte GIF declaring 65535×65535, is refused from its header, before any pixel
is decoded.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from PIL import Image

# Pillow format → the type it is served and sent as. Raster formats browsers and vision APIs take.
ALLOWED_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
TOO_MANY_PIXELS = "too many pixels"
NOT_AN_IMAGE = "not a readable PNG, JPEG, WebP or GIF image"


class ImageRefused(Exception):
    """The image is not used; the message is the short reason a record or page shows."""


@dataclass(frozen=True)
class InspectedImage:
    content_type: str  # what Pillow found in the bytes
    width: int
    height: int


@contextmanager
def opened_image(source: bytes | Path | BinaryIO) -> Iterator[tuple[Image.Image, InspectedImage]]:
    """The image, opened (header read, nothing decoded), and what it is; raises ``ImageRefused``.
    A file object is read from where it stands, and only as far as the header (the caller rewinds it).
    Anything Pillow raises inside the block — a body that does not decode — is refused too: a
    hostile file can make a decoder raise almost any exception type."""
    try:
        readable = io.BytesIO(source) if isinstance(source, bytes) else source
        with Image.open(readable, formats=tuple(ALLOWED_FORMATS)) as image:
            # Pillow raises only above twice its limit (it merely warns between one and two times).
            # None: Pillow's limit is switched off, and so is this one.
            limit = Image.MAX_IMAGE_PIXELS
            if limit is not None and image.width * image.height > limit:
                raise ImageRefused(TOO_MANY_PIXELS)
            inspected = InspectedImage(ALLOWED_FORMATS[str(image.format)], image.width, image.height)
            yield image, inspected
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageRefused(TOO_MANY_PIXELS) from exc
    except ImageRefused:
        raise
    except Exception as exc:
        raise ImageRefused(NOT_AN_IMAGE) from exc


def inspect_image(source: bytes | Path | BinaryIO) -> InspectedImage:
    """The allowed type and dimensions of an image from its bytes, or ``ImageRefused`` with why not."""
    with opened_image(source) as (_, inspected):
        return inspected


def configure_pillow(max_pixels: int) -> None:
    """The process's pixel bound: ``opened_image`` refuses more, and Pillow's own guard (for any other
    decoding in the process) counts from it too."""
    Image.MAX_IMAGE_PIXELS = max_pixels
