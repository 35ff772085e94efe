"""A local HTTP server standing in for Discord's CDN in the image tests (the tests never reach the
internet). ``/small.png`` and ``/anim.gif`` are real images; ``/huge-declared.png`` declares 20 MB,
``/huge-chunked.png`` sends 20 MB without declaring its length; ``/bomb.gif`` is a decompression bomb
(``bomb_gif_bytes``) and ``/garbage.png`` bytes no decoder reads, both served as the image they claim.
``served`` counts the bytes each path managed to write before the client hung up."""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web
from PIL import Image

from tests.bot.loopback import serve_on_loopback

HUGE_BYTES = 20 * 1000 * 1000
CHUNK = 64 * 1024


def png_bytes(color: str = "red", size: tuple[int, int] = (4, 4)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


def animated_gif_bytes() -> bytes:
    frames = [Image.new("RGB", (4, 4), color) for color in ("blue", "yellow", "green")]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


def bomb_gif_bytes(width: int = 65535, height: int = 65535) -> bytes:
    """A 29-byte GIF whose header declares ``width`` × ``height`` pixels (65535² would take 17 GB as
    RGBA): a screen and an image descriptor of that size, one empty LZW block, the trailer."""
    size = width.to_bytes(2, "little") + height.to_bytes(2, "little")
    return b"GIF89a" + size + b"\x00\x00\x00" + b"\x2c\x00\x00\x00\x00" + size + b"\x00\x02\x02\x4c\x01\x00\x3b"


GARBAGE = b"\x89PNG not really" + bytes(range(256))


@dataclass
class ImageServer:
    base_url: str = ""
    served: Counter[str] = field(default_factory=Counter)
    _runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/small.png", self._small)
        app.router.add_get("/anim.gif", self._gif)
        app.router.add_get("/missing.png", self._missing)
        app.router.add_get("/bomb.gif", self._bomb)
        app.router.add_get("/garbage.png", self._garbage)
        app.router.add_get("/huge-declared.png", self._huge_declared)
        app.router.add_get("/huge-chunked.png", self._huge_chunked)
        self._runner, self.base_url = await serve_on_loopback(app)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path}"

    async def _small(self, request: web.Request) -> web.Response:
        return web.Response(body=png_bytes(), content_type="image/png")

    async def _gif(self, request: web.Request) -> web.Response:
        return web.Response(body=animated_gif_bytes(), content_type="image/gif")

    async def _bomb(self, request: web.Request) -> web.Response:
        return web.Response(body=bomb_gif_bytes(), content_type="image/gif")

    async def _garbage(self, request: web.Request) -> web.Response:
        return web.Response(body=GARBAGE, content_type="image/png")

    async def _missing(self, request: web.Request) -> web.Response:
        return web.Response(status=404)

    async def _huge(self, request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
        await response.prepare(request)
        chunk = b"\0" * CHUNK
        try:
            while self.served[request.path] < HUGE_BYTES:
                await response.write(chunk)
                self.served[request.path] += len(chunk)
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass  # the client stopped reading: what the budget is for
        return response

    async def _huge_declared(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "image/png", "Content-Length": str(HUGE_BYTES)})
        return await self._huge(request, response)

    async def _huge_chunked(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "image/png"})
        response.enable_chunked_encoding()
        return await self._huge(request, response)
