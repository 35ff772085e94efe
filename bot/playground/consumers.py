"""The websocket of a playground channel: `/ws/playground/channels/<channel_id>/`.

Only staff who moderate the channel's server (or superusers) may connect, and only while they
still may (``chatcontext.records.consumers.FeedConsumer``: access is re-checked while the socket is open,
and it closes with 4403 when it is gone — this socket carries message text). The socket joins the
channel's group (messages, streamed replies; ``bot.playground.live``) and the server's prompt-record
group of ``chatcontext.records.consumers``, of which it forwards the records of this channel.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from bot.playground.live import channel_group
from bot.playground.models import PlaygroundChannel
from chatcontext.records.consumers import FORBIDDEN, FeedConsumer, group_name


class PlaygroundChannelConsumer(FeedConsumer):
    async def connect(self) -> None:
        channel_pk = int(self.scope["url_route"]["kwargs"]["channel_id"])
        found = await database_sync_to_async(self._channel)(channel_pk)
        if found is None:
            await self.close(code=FORBIDDEN)  # the same answer as a channel of another server
            return
        self.channel_disc_id = found[2]
        await self.open_feed(found[1], [channel_group(found[0]), group_name(found[1])])

    @staticmethod
    def _channel(channel_pk: int) -> tuple[int, int, str] | None:
        return PlaygroundChannel.objects.filter(pk=channel_pk).values_list("pk", "server_id", "disc_id").first()

    async def playground_event(self, event: dict[str, Any]) -> None:
        await self.send_event(event["event"])

    async def turn_recorded(self, event: dict[str, Any]) -> None:
        record = event["record"]
        if record.get("channel_disc_id") == self.channel_disc_id:
            await self.send_event({"kind": "record", "record": record})
