"""A local OpenAI-compatible chat-completions server for the provider tests.

Behaviour is chosen by the requested model name, so one server serves every scenario:
``ok`` answers; ``slow`` never answers until the test ends (for timeouts); ``fail`` returns 500;
``flaky`` returns 500 once per server, then answers. Streaming requests get SSE chunks. Every request
body is kept (``requests``), so tests read the messages, and their image parts, the server received.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@dataclass
class FakeLLMServer:
    reply_text: str = "hello from the test server"
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # of each request, names lower-cased
    base_url: str = ""
    release: asyncio.Event = field(default_factory=asyncio.Event)
    _flaky_failed: bool = False
    _runner: web.AppRunner | None = None

    def image_urls(self, request_index: int = -1) -> list[str]:
        """The ``image_url`` parts one request carried, in message order."""
        return [
            part["image_url"]["url"]
            for message in self.requests[request_index]["messages"]
            if isinstance(message["content"], list)
            for part in message["content"]
            if part["type"] == "image_url"
        ]

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"

    async def stop(self) -> None:
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append({name.lower(): value for name, value in request.headers.items()})
        model = body.get("model", "ok")
        if model == "slow":
            await self.release.wait()
            return web.json_response({"error": "released"}, status=503)
        if model == "fail" or (model == "flaky" and not self._flaky_failed):
            self._flaky_failed = True
            return web.json_response({"error": {"message": "boom"}}, status=500)
        if body.get("stream"):
            return await self._stream(request, model)
        return web.json_response(
            {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": self.reply_text}, "finish_reason": "stop"}
                ],
                "usage": USAGE,
            }
        )

    async def _stream(self, request: web.Request, model: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        words = self.reply_text.split(" ")
        pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
        for piece in pieces:
            chunk = {
                "id": "cmpl-1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        final = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []}
        await response.write(f"data: {json.dumps({**final, 'usage': USAGE})}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
