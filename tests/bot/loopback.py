"""The test servers' (fake LLM, images, Discord) one way onto the network: a free loopback port."""

from __future__ import annotations

from aiohttp import web


async def serve_on_loopback(app: web.Application) -> tuple[web.AppRunner, str]:
    """``app`` served on 127.0.0.1: its runner (``cleanup()`` stops it) and ``http://127.0.0.1:<port>``."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"
