"""A local OpenAI-compatible chat-completions server for the provider tests.

Behaviour is chosen by the requested model name, so one server serves every scenario:
``ok`` answers; ``slow`` never answers until the test ends (for timeouts); ``fail`` returns 500;
``busy`` returns 429 with OpenAI's rate-limit error;
``flaky`` returns 500 once per server, then answers; ``notools`` returns 400 to a request that offers
tools (a model without tool support, in llama.cpp's words); ``unauthorized`` returns 401 quoting
the request's key back as OpenAI does; ``overflow`` streams an error event (llama.cpp's context
overflow); any other model is missing (404). Errors have the body real
servers send (``{"error": {"message", "type", "code"}}``). Streaming requests get SSE chunks. Every request body is kept
(``requests``), so tests read the messages, and their image parts, the server received.
``on_request``, when set, runs as each request arrives (what happens elsewhere while the model writes).

The context window is reported as real servers report it when set: ``n_ctx`` by ``GET /props`` as
llama.cpp does, ``context_length`` in the ``GET /v1/models`` entries as OpenRouter and LM Studio do;
unset, that route answers 404. ``limits_body`` replaces both answers with that text (a broken
server). The paths of those GETs are kept (``limit_asks``), and their Authorization headers (``limit_keys``).

Tool calls are scripted: each request takes the next entry of ``script`` (``tool_round(...)``: the
assistant asks for those calls; a string: it answers that text), and answers ``reply_text`` once
the script is used up. Streamed tool calls arrive as OpenAI sends them: the id and name first, the
arguments in fragments.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.bot.loopback import serve_on_loopback

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
# What a hostile or broken model may answer: the server's JSON carries them as `\u0000` and `\ud800`
# escapes, in a reply and (``UNSTORABLE_ARGUMENTS``, escaped once more inside the arguments' own JSON
# and once as the characters themselves) in a tool call's arguments.
UNSTORABLE_REPLY = "Hi\x00 there \ud800!"
UNSTORABLE_ARGUMENTS = '{"user": "ann\x00", "content": "cat\\u0000 called \\ud800 Mochi \\ud83d\\ude00\ud800"}'


ScriptEntry = str | list[tuple[str, str]]
MODELS = frozenset({"ok", "slow", "fail", "flaky", "busy", "notools", "unauthorized", "overflow"})


def error_response(status: int, message: str, kind: str) -> web.Response:
    """An error as OpenAI, llama.cpp and vLLM send one."""
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status)


def tool_round(*calls: tuple[str, str]) -> list[tuple[str, str]]:
    """One scripted assistant turn asking for ``(tool name, raw JSON arguments)`` calls."""
    return list(calls)


@dataclass
class FakeLLMServer:
    reply_text: str = "hello from the test server"
    script: list[ScriptEntry] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # of each request, names lower-cased
    peers: list[tuple[str, int]] = field(default_factory=list)  # the client address of each request
    base_url: str = ""
    release: asyncio.Event = field(default_factory=asyncio.Event)
    on_request: Callable[[], Awaitable[None]] | None = None
    n_ctx: int | None = None
    context_length: int | None = None
    limits_body: str | None = None
    limit_asks: list[str] = field(default_factory=list)
    limit_keys: list[str] = field(default_factory=list)
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
        app.router.add_get("/props", self._props)
        app.router.add_get("/v1/models", self._models)
        self._runner, origin = await serve_on_loopback(app)
        self.base_url = f"{origin}/v1"

    async def stop(self) -> None:
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def _limits(self, request: web.Request, reported: int | None, body: dict[str, Any]) -> web.Response:
        self.limit_asks.append(request.path)
        self.limit_keys.append(request.headers.get("Authorization", ""))
        if self.limits_body is not None:
            return web.Response(text=self.limits_body, content_type="application/json")
        if reported is None:
            return error_response(404, "File Not Found", "not_found_error")
        return web.json_response(body)

    async def _props(self, request: web.Request) -> web.Response:
        settings = {"n_ctx": self.n_ctx, "n_predict": -1, "temperature": 0.8}
        return self._limits(request, self.n_ctx, {"default_generation_settings": settings, "total_slots": 1})

    async def _models(self, request: web.Request) -> web.Response:
        entries = [{"id": model, "object": "model", "context_length": self.context_length} for model in sorted(MODELS)]
        return self._limits(request, self.context_length, {"object": "list", "data": entries})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if self.on_request is not None:
            await self.on_request()
        self.headers.append({name.lower(): value for name, value in request.headers.items()})
        self.peers.append(request.transport.get_extra_info("peername") if request.transport else ("", 0))
        model = body.get("model", "ok")
        if model == "slow":
            await self.release.wait()
            return error_response(503, "Loading model", "unavailable_error")
        if model == "fail" or (model == "flaky" and not self._flaky_failed):
            self._flaky_failed = True
            return error_response(500, "llama_decode failed: out of memory", "server_error")
        if model == "busy":
            return error_response(429, "Rate limit reached for requests per min: Limit 3, Used 3", "requests")
        if model == "notools" and body.get("tools"):
            return error_response(400, "tools param requires --jinja flag", "invalid_request_error")
        if model == "unauthorized":
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return error_response(401, f"Incorrect API key provided: {key}.", "invalid_request_error")
        if model == "overflow" and body.get("stream"):
            return await self._stream_error(request, "the request exceeds the available context size")
        if model not in MODELS:
            return error_response(404, f"The model `{model}` does not exist", "invalid_request_error")
        entry: ScriptEntry = self.script.pop(0) if self.script else self.reply_text
        if isinstance(entry, list):
            if body.get("stream"):
                return await self._stream_calls(request, model, entry)
            return self._calls(model, entry)
        if body.get("stream"):
            return await self._stream(request, model, entry)
        return web.json_response(
            {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": entry}, "finish_reason": "stop"}],
                "usage": USAGE,
            }
        )

    def _calls(self, model: str, calls: list[tuple[str, str]]) -> web.Response:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                for i, (name, arguments) in enumerate(calls)
            ],
        }
        return web.json_response(
            {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                "usage": USAGE,
            }
        )

    async def _stream_calls(self, request: web.Request, model: str, calls: list[tuple[str, str]]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for i, (name, arguments) in enumerate(calls):
            half = len(arguments) // 2
            fragments = [
                {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": ""}},
                {"index": i, "function": {"arguments": arguments[:half]}},
                {"index": i, "function": {"arguments": arguments[half:]}},
            ]
            for fragment in fragments:
                chunk = {
                    "id": "cmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": {"tool_calls": [fragment]}, "finish_reason": None}],
                }
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _stream_error(self, request: web.Request, message: str) -> web.StreamResponse:
        """An error after the stream began: HTTP 200 and an ``error`` event, as llama.cpp sends one."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        error = {"error": {"message": message, "type": "exceed_context_size_error", "code": 400}}
        await response.write(f"data: {json.dumps(error)}\n\n".encode())
        await response.write_eof()
        return response

    async def _stream(self, request: web.Request, model: str, text: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        words = text.split(" ")
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


class ThreadedFakeLLMServer:
    """A ``FakeLLMServer`` on its own event loop in a thread, as a real provider is to the platform:
    an HTTP/1.1 server that keeps connections alive (aiohttp's default) while the callers' loops
    come and go."""

    def __init__(self) -> None:
        self.server = FakeLLMServer()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fake-llm", daemon=True)

    def __enter__(self) -> FakeLLMServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result()
        return self.server

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()
