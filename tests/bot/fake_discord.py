"""A local stand-in for Discord's HTTP API and gateway, for ``manage.py runbot`` run as a process.

discord.py reads its API base from ``discord.http.Route.BASE``; ``runbot_command`` starts
``manage.py runbot`` with that base pointed here. The gateway speaks just enough of the protocol
for a start-up: HELLO, then, on IDENTIFY, READY (in no guild yet) when ``intents_enabled``, else
the close code Discord sends when the application has not enabled the privileged intents the bot
asked for (4014). The token ``BAD_TOKEN`` gets the 401
Discord answers an invalid token with.
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import dataclass, field

from aiohttp import web

from tests.bot.loopback import serve_on_loopback

APPLICATION_ID = "123456789012345678"
# A bot token's first segment is its application id in base64, as Discord issues them.
TOKEN = f"{base64.b64encode(APPLICATION_ID.encode()).decode()}.GxYzAb.fake-secret-part"
BAD_TOKEN = f"{base64.b64encode(APPLICATION_ID.encode()).decode()}.GxYzAb.revoked-secret-part"
PRIVILEGED_INTENTS_MISSING = 4014
BOT_USER = {"id": APPLICATION_ID, "username": "tomori", "discriminator": "0", "avatar": None, "bot": True}


def json_response(data: object, status: int = 200) -> web.Response:
    """JSON with Discord's exact content type: discord.py reads a body as JSON only under that one."""
    return web.Response(body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"})


def runbot_command(api_base: str, *args: str) -> list[str]:
    """``manage.py runbot *args`` with discord.py's HTTP base at ``api_base``."""
    launcher = (
        "import runpy, sys, discord.http; discord.http.Route.BASE = sys.argv.pop(1); "
        "runpy.run_path('manage.py', run_name='__main__')"
    )
    return [sys.executable, "-c", launcher, api_base, "runbot", *args]


@dataclass
class FakeDiscord:
    intents_enabled: bool = False
    gateway_url: str = ""  # where /gateway/bot sends the bot; empty: this server's own gateway
    api_base: str = ""
    identified: list[dict[str, object]] = field(default_factory=list)
    _runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_get("/api/v10/gateway/bot", self._gateway_bot)
        app.router.add_get("/gateway", self._gateway)
        self._runner, origin = await serve_on_loopback(app)
        self.api_base = f"{origin}/api/v10"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _me(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bot {TOKEN}":
            return json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        return json_response(BOT_USER)

    async def _application(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "id": APPLICATION_ID,
                "name": "Tomori",
                "description": "",
                "icon": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": {**BOT_USER, "id": "42", "bot": False, "username": "owner"},
                "verify_key": "0" * 64,
                "flags": 0,
            }
        )

    async def _gateway_bot(self, request: web.Request) -> web.Response:
        limit = {"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}
        url = self.gateway_url or str(request.url.with_path("/gateway").with_query(None)).replace("http://", "ws://")
        return json_response({"url": url, "shards": 1, "session_start_limit": limit})

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 45000}, "s": None, "t": None})
        async for message in ws:
            payload = message.json()
            if payload.get("op") != 2:  # only IDENTIFY gets an answer
                continue
            self.identified.append(payload["d"])
            if not self.intents_enabled:
                await ws.close(code=PRIVILEGED_INTENTS_MISSING, message=b"Disallowed intent(s).")
                continue
            ready = {
                "v": 10,
                "user": BOT_USER,
                "guilds": [],
                "session_id": "fake-session",
                "resume_gateway_url": str(request.url.with_query(None)),
                "shard": payload["d"]["shard"],
                "application": {"id": APPLICATION_ID, "flags": 0},
            }
            await ws.send_json({"op": 0, "t": "READY", "s": 1, "d": ready})
        return ws
