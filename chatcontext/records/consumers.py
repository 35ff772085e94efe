"""Live feed of new prompt records: `/ws/servers/<server_id>/turns/`.

Only staff who moderate the server (or superusers) may connect; anyone else is closed with 4403.
Records are announced by ``announce_record`` after their transaction commits, through the
channel layer (Redis when REDIS_URL is set, so a record stored by the bot process reaches a
browser connected to the web process).

A feed socket stays open for hours, so access is not decided once at connect (``FeedConsumer``):
every event is sent only after the account's access was confirmed within the last
``ACCESS_RECHECK_SECONDS``, read afresh from the database, and a change of the account's access
(its moderator rows, its active, staff or superuser flag, its deletion: ``personas.signals``) is
pushed to its sockets, which re-check at once and close with 4403 when access is gone. The push
makes revocation immediate, idle sockets included; the periodic re-check makes it certain when a
push is lost (channel layer down) or never sent (a queryset ``update``): a socket then sends at
most ``ACCESS_RECHECK_SECONDS`` worth of events more. Re-checking before every event instead
would cost two queries per streamed reply fragment on the playground socket. API tokens cannot
open feeds (websockets authenticate by session only), so token revocation needs no handling here.
"""

from __future__ import annotations

import time
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from infrastructure.best_effort import FEED, REDIS_ERRORS, send_to_group
from personas.access import access_group, user_sees_server

FORBIDDEN = 4403
# A frame from the browser: these sockets only send (and a frame that is no JSON crashed the consumer).
CLIENT_FRAME = 4400
NOT_FOUND = 4404
# The channel layer (Redis) is unreachable: the page says live updates are paused and reconnects.
LIVE_PAUSED = 4503
PAUSED_REASON = "live updates paused: Redis unreachable"
ACCESS_RECHECK_SECONDS = 5.0


def group_name(server_id: int) -> str:
    return f"server-turns-{server_id}"


def record_summary(record: Any) -> dict[str, Any]:
    """What the feed carries: identifiers and figures, never prompt text."""
    return {
        "id": record.pk,
        "server_id": record.server_id,
        "channel_disc_id": record.channel_disc_id,
        "channel_name": record.channel_name,
        "persona_id": record.persona_id,
        "persona_nickname": record.persona_nickname,
        "source": record.source,
        "created_at": record.created_at.isoformat(),
        "token_estimate": record.token_estimate,
        "latency_ms": record.latency_ms,
        "failed": bool(record.error),
    }


def announce_record(record: Any) -> None:
    """Best-effort (infrastructure.best_effort): with the channel layer down the record stays stored."""
    async_to_sync(send_to_group)(
        group_name(record.server_id), {"type": "turn.recorded", "record": record_summary(record)}
    )


class FeedConsumer(AsyncJsonWebsocketConsumer):
    """A websocket that streams one server's events to a staff account while it may see the server."""

    server_id: int
    feed_groups: list[str]
    checked_at = 0.0
    closed = False
    accepted = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """A channel layer that fails, when the socket connects or while it is open, ended the consumer
        with its exception: a handshake 500, or 1006 for an open socket. It closes the socket with
        LIVE_PAUSED and a reason instead (accepted first, or the browser sees neither)."""
        try:
            await super().__call__(scope, receive, send)
        except REDIS_ERRORS as exc:
            FEED.failed(exc)
            if self.closed:
                return
            self.closed = True
            if not self.accepted:
                await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": LIVE_PAUSED, "reason": PAUSED_REASON})

    async def open_feed(self, server_id: int, groups: list[str]) -> None:
        """Accept the socket and join ``groups`` if the account sees ``server_id``; else close with 4403."""
        user = self.scope.get("user")
        self.user_id = user.pk if user is not None and user.is_authenticated else None
        self.server_id = server_id
        if not await self.access_holds():
            return
        self.feed_groups = [*groups, *([access_group(self.user_id)] if self.user_id is not None else [])]
        for group in self.feed_groups:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        self.accepted = True

    async def access_holds(self) -> bool:
        """Ask the database again; on a refusal leave the groups and close the socket with 4403."""
        if self.closed:
            return False
        if await database_sync_to_async(user_sees_server)(self.user_id, self.server_id):
            self.checked_at = time.monotonic()
            return True
        self.closed = True
        await self.leave_feed()
        await self.close(code=FORBIDDEN)
        return False

    async def send_event(self, content: dict[str, Any]) -> None:
        """Send one event of the server, after re-checking access when the last check is too old."""
        if self.closed:
            return
        if time.monotonic() - self.checked_at >= ACCESS_RECHECK_SECONDS and not await self.access_holds():
            return
        await self.send_json(content)

    async def access_changed(self, event: dict[str, Any]) -> None:
        """``personas.access.announce_access_change``: this account's access may have changed."""
        await self.access_holds()

    async def leave_feed(self) -> None:
        for group in getattr(self, "feed_groups", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        self.feed_groups = []

    async def disconnect(self, code: int) -> None:
        await self.leave_feed()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        self.closed = True
        await self.leave_feed()
        await self.close(code=CLIENT_FRAME, reason="this socket only sends")


async def refuse_unknown_socket(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Every websocket path no route names: refused with 4404 (without it the router raised, a 500).

    A bare ASGI application rather than a consumer: a consumer opens a channel-layer channel first,
    and on Redis the refused consumer then sat in a blocking read for seconds after the browser left.
    """
    if (await receive())["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": NOT_FOUND})


class ServerTurnsConsumer(FeedConsumer):
    async def connect(self) -> None:
        server_id = int(self.scope["url_route"]["kwargs"]["server_id"])
        await self.open_feed(server_id, [group_name(server_id)])

    async def turn_recorded(self, event: dict[str, Any]) -> None:
        await self.send_event({"type": "turn", "record": event["record"]})
