"""The websocket of a playground channel: `/ws/playground/channels/<channel_id>/`.

Only staff who moderate the channel's server (or superusers) may connect; anyone else is closed
with 4403, like the turn feed of ``chatcontext.consumers``. The socket joins the channel's group
(messages, streamed replies; ``bot.playground.live``) and the server's prompt-record group of
``chatcontext.consumers``, of which it forwards the records of this channel.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from bot.models import PlaygroundChannel
from bot.playground.live import channel_group
from chatcontext.consumers import FORBIDDEN, group_name
from personas.access import principal_for_user


class PlaygroundChannelConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        channel_pk = int(self.scope["url_route"]["kwargs"]["channel_id"])
        found = await database_sync_to_async(self._visible_channel)(self.scope.get("user"), channel_pk)
        if found is None:
            await self.close(code=FORBIDDEN)
            return
        self.groups_joined = [channel_group(found[0]), group_name(found[1])]
        self.channel_disc_id = found[2]
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()

    @staticmethod
    def _visible_channel(user: Any, channel_pk: int) -> tuple[int, int, str] | None:
        who = principal_for_user(user)
        channel = PlaygroundChannel.objects.filter(pk=channel_pk).values_list("pk", "server_id", "disc_id").first()
        if who is None or channel is None or not who.sees(channel[1]):
            return None
        return channel

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def playground_event(self, event: dict[str, Any]) -> None:
        await self.send_json(event["event"])

    async def turn_recorded(self, event: dict[str, Any]) -> None:
        record = event["record"]
        if record.get("channel_disc_id") == self.channel_disc_id:
            await self.send_json({"kind": "record", "record": record})
