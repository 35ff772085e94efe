"""What the playground page shows and receives live: message payloads and channel-layer events.

Each playground channel has a channel-layer group; its websocket (``bot.playground.consumers``)
also joins the server's prompt-record group of ``chatcontext.records.consumers``, so a new record of the
channel reaches the page the same way the inspector's live feed gets it. Events:

- ``message``: a stored message (new, or its reactions, transcript or notes changed — why it was
  not answered or transcribed, ``bot.playground.notes``), as ``message_payloads`` shapes it;
- ``typing`` then ``delta`` …: a persona's reply streaming in, keyed by ``stream_id``; the final
  ``message`` carries the same ``stream_id`` and replaces what was streamed.

Payloads go only to staff of the server (the page and the socket check that); they carry the text a
moderator could read in Discord, never data the prompt withheld.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.urls import reverse

from bot.conversation.db import in_callers_transaction
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.notes import message_notes
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.types import Author, DiscordMessage, JSONDict
from chatcontext.models import VoiceTranscript
from infrastructure.best_effort import send_to_group

EVENT_TYPE = "playground.event"
EXCERPT_CHARS = 80


def channel_group(channel_pk: int) -> str:
    return f"playground-channel-{channel_pk}"


def stream_id(trigger_disc_id: str, persona_id: int | None) -> str:
    return f"{trigger_disc_id}:{persona_id}"


def _name(message: DiscordMessage) -> str:
    author = message.author
    return message.member_display_name or author.display_name or author.global_name or author.username


def message_payloads(
    channel: PlaygroundChannel, rows: Sequence[PlaygroundMessage], *, bot_user: Author
) -> list[dict[str, Any]]:
    """Rows (with ``reply_to`` selected) as the page renders them; names are read the way the
    pipeline reads them. Three queries whatever the number of rows: members, non-member users and
    voice transcripts."""
    transport = PlaygroundTransport(channel, bot_user=bot_user)
    replied = [r.reply_to for r in rows if r.reply_to is not None]
    messages = {m.id: m for m in transport.read_rows([*rows, *replied])}
    transcripts = dict(
        VoiceTranscript.objects.filter(
            message_disc_id__in=[r.disc_id for r in rows if r.attachments],
            source=VoiceTranscript.Source.USER_STT,
        ).values_list("message_disc_id", "transcript")
    )
    payloads = []
    for row in rows:
        message = messages[row.disc_id]
        reply = messages.get(row.reply_to.disc_id) if row.reply_to is not None else None
        payloads.append(
            {
                "id": row.disc_id,
                "author_id": message.author.id,
                "author_name": _name(message),
                "kind": "persona" if row.persona_id else ("bot" if row.is_bot else "user"),
                "content": row.content,
                "created_at_ms": row.created_at_ms,
                "reply_to": (
                    {"id": reply.id, "author_name": _name(reply), "excerpt": reply.content[:EXCERPT_CHARS]}
                    if reply is not None
                    else None
                ),
                "embeds": [dict(e) for e in row.embeds or []],
                "reactions": [
                    {"emoji": r["emoji"], "users": list(r["users"])} for r in row.reactions or [] if r.get("users")
                ],
                "attachments": [
                    {
                        "id": a["id"],
                        "name": a["name"],
                        "content_type": a.get("content_type") or "",
                        "size": a.get("size") or 0,
                        "url": reverse("playground:attachment", args=[row.disc_id, a["id"]]),
                    }
                    for a in row.attachments or []
                ],
                "transcript": transcripts.get(row.disc_id),
                "notes": message_notes(row.skip_reason, row.transcription_failure),
            }
        )
    return payloads


async def publish(channel_pk: int, event: dict[str, Any]) -> None:
    """Send one event to every page showing the channel; best-effort (infrastructure.best_effort): the
    page misses it when the channel layer is down, the stored messages and records do not."""
    await send_to_group(channel_group(channel_pk), {"type": EVENT_TYPE, "event": event})


async def publish_message(
    channel: PlaygroundChannel, row: PlaygroundMessage, bot_user: Author, *, stream_id: str | None = None
) -> None:
    """One stored message to the channel's pages; ``stream_id`` names the streamed reply it replaces."""
    [payload] = await in_callers_transaction(_payloads_with_reply)(channel, row, bot_user)
    await publish(channel.pk, {"kind": "message", "message": payload, "stream_id": stream_id})


def _payloads_with_reply(channel: PlaygroundChannel, row: PlaygroundMessage, bot_user: Author) -> list[JSONDict]:
    fresh = PlaygroundMessage.objects.select_related("reply_to").get(pk=row.pk)
    return message_payloads(channel, [fresh], bot_user=bot_user)
