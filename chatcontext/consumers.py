"""Live feed of new prompt records: `/ws/servers/<server_id>/turns/`.

Only staff who moderate the server (or superusers) may connect; anyone else is closed with 4403.
Records are announced by ``announce_record`` after their transaction commits, through the
channel layer (Redis when REDIS_URL is set, so a record stored by the bot process reaches a
browser connected to the web process).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from botplatform.best_effort import send_to_group
from personas.access import principal_for_user

FORBIDDEN = 4403


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
    """Best-effort (botplatform.best_effort): with the channel layer down the record stays stored."""
    async_to_sync(send_to_group)(
        group_name(record.server_id), {"type": "turn.recorded", "record": record_summary(record)}
    )


class ServerTurnsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.server_id = int(self.scope["url_route"]["kwargs"]["server_id"])
        allowed = await database_sync_to_async(self._allowed)(self.scope.get("user"))
        if not allowed:
            await self.close(code=FORBIDDEN)
            return
        await self.channel_layer.group_add(group_name(self.server_id), self.channel_name)
        await self.accept()

    def _allowed(self, user: Any) -> bool:
        who = principal_for_user(user)
        return who is not None and who.sees(self.server_id)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "server_id"):
            await self.channel_layer.group_discard(group_name(self.server_id), self.channel_name)

    async def turn_recorded(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "turn", "record": event["record"]})
