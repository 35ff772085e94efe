"""Playground rows: channels, messages, reactions, uploads and the identities one can speak as.

Synchronous ORM code; the async service calls it through ``service.db``. Uploads are
kept under ``<VAR_DIR>/playground-uploads/<message id>/`` and reach the pipeline as ``file://``
attachment urls, which the speech-to-text task and ``replay_turn`` read like any other url.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Case, F, Value, When
from django.utils.text import get_valid_filename

from bot.conversation.image_bytes import ImageRefused, inspect_image
from bot.playground.models import PlaygroundChannel, PlaygroundMessage, allocate_snowflakes
from bot.playground.notes import SERVER_RESTARTED
from chatcontext.core.storable import storable_text
from chatcontext.core.types import Attachment, Author, PersonaInfo
from personas import models as m

UPLOAD_DIR_NAME = "playground-uploads"
MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # Discord's upload limit for servers without boosts
MAX_CONTENT_CHARS = 4000  # Discord's limit with Nitro; more is refused, not cut
# The account the main persona speaks as on a server that has no bot member row.
PLAYGROUND_BOT_DISC_ID = "100000000000000001"
PLAYGROUND_BOT_USERNAME = "tomori-playground"


class PlaygroundError(ValueError):
    """A request the playground refuses; the message is safe to show (no user text)."""


def upload_root() -> Path:
    return Path(settings.VAR_DIR) / UPLOAD_DIR_NAME


def attachment_path(attachment: dict[str, Any]) -> Path:
    return upload_root() / str(attachment["path"])


def attachment_url(attachment: dict[str, Any]) -> str:
    return attachment_path(attachment).resolve().as_uri()


def as_attachment(attachment: dict[str, Any]) -> Attachment:
    """A stored attachment as Discord would describe it, its url pointing at the stored file."""
    return Attachment(
        id=attachment["id"],
        name=attachment["name"],
        url=attachment_url(attachment),
        content_type=attachment.get("content_type"),
        size=int(attachment.get("size") or 0),
    )


# --- identities -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """A member of the server one can speak as in the playground, with the privacy level that
    decides what of theirs reaches a prompt (participants.md P-01..P-05)."""

    disc_id: str
    name: str
    username: str
    privacy_level: int

    @property
    def privacy_label(self) -> str:
        return m.PrivacyLevel(self.privacy_level).name


def identities(server: m.Server) -> list[Identity]:
    """Every human member of the server (bots cannot trigger a persona), in name order: two queries."""
    rows = list(m.ServerMember.objects.filter(server=server, is_bot=False))
    levels = dict(
        m.DiscordUser.objects.filter(user_disc_id__in=[r.user_disc_id for r in rows]).values_list(
            "user_disc_id", "privacy_level"
        )
    )
    people = [
        Identity(
            disc_id=r.user_disc_id,
            name=r.nickname or r.global_name or r.username or r.user_disc_id,
            username=r.username or "",
            privacy_level=levels.get(r.user_disc_id, m.PrivacyLevel.MINIMAL),
        )
        for r in rows
    ]
    return sorted(people, key=lambda i: (i.name.lower(), i.disc_id))


def bot_identity(server: m.Server, main_persona: PersonaInfo | None) -> Author:
    """The account the main persona speaks as: the server's bot member (the bot's own account on
    Discord) or, on a server the bot never joined, the playground's bot named after the persona."""
    row = m.ServerMember.objects.filter(server=server, is_bot=True).order_by("user_disc_id").first()
    if row is not None:
        name = row.username or row.user_disc_id
        return Author(
            id=row.user_disc_id,
            username=name,
            global_name=row.global_name,
            display_name=row.global_name or name,
            bot=True,
        )
    persona_name = main_persona.persona_nickname if main_persona else None
    return Author(
        id=PLAYGROUND_BOT_DISC_ID,
        username=PLAYGROUND_BOT_USERNAME,
        global_name=persona_name,
        display_name=persona_name or PLAYGROUND_BOT_USERNAME,
        bot=True,
    )


# --- channels and messages -------------------------------------------------------------------------


def create_channel(
    server: m.Server, name: str, *, topic: str = "", created_by: Any = None, now_ms: int
) -> PlaygroundChannel:
    """A new channel with Discord's channel-name rules (lower case, no spaces, at most 100 chars)."""
    clean = "-".join(name.strip().lstrip("#").lower().split())[:100]
    if not clean:
        raise PlaygroundError("A channel needs a name.")
    channel_id, webhook_id = allocate_snowflakes(2, now_ms)
    return PlaygroundChannel.objects.create(
        server=server,
        disc_id=channel_id,
        webhook_disc_id=webhook_id,
        name=clean,
        topic=topic.strip(),
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )


def _stored_type(upload: UploadedFile) -> str | None:
    """The type kept with an upload: an image's from its bytes (``image_bytes``). Of anything else the
    uploader's word is kept only when it says audio or video, the pipeline's hint for speech-to-text and
    media notes; serving never trusts it (``views.attachment`` reads the bytes again)."""
    upload.seek(0)
    try:
        # The file itself, not its bytes: Pillow reads the header only, not a whole upload into memory.
        # (Django's File proxies read/seek/tell to the file it wraps; its stubs do not say it is one.)
        return inspect_image(upload).content_type  # type: ignore[arg-type]
    except ImageRefused:
        declared = storable_text(upload.content_type or "").lower()
        return declared if declared.startswith(("audio/", "video/")) else None
    finally:
        upload.seek(0)


def _save_uploads(
    message_id: str, uploads: Sequence[UploadedFile], attachment_ids: Sequence[str]
) -> list[dict[str, Any]]:
    storage = FileSystemStorage(location=upload_root())
    stored = []
    for upload, attachment_id in zip(uploads, attachment_ids, strict=True):
        name = get_valid_filename(Path(upload.name or "file").name) or "file"
        content_type = _stored_type(upload)
        path = storage.save(f"{message_id}/{attachment_id}-{name}", upload)
        stored.append(
            {
                "id": attachment_id,
                "name": name,
                "content_type": content_type,
                "size": int(upload.size or 0),
                "path": path,
            }
        )
    return stored


def store_user_message(
    channel: PlaygroundChannel,
    author_disc_id: str,
    content: str,
    *,
    now_ms: int,
    reply_to: PlaygroundMessage | None = None,
    uploads: Sequence[UploadedFile] = (),
) -> PlaygroundMessage:
    """A person's message, with its uploads saved to disk. Refuses an empty message, one too long,
    a file over Discord's upload limit and a reply to a message of another channel."""
    if not content.strip() and not uploads:
        raise PlaygroundError("A message needs text or a file.")
    if len(content) > MAX_CONTENT_CHARS:
        raise PlaygroundError(f"A message holds at most {MAX_CONTENT_CHARS} characters.")
    if any((u.size or 0) > MAX_UPLOAD_BYTES for u in uploads):
        raise PlaygroundError(f"A file may be at most {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
    if reply_to is not None and reply_to.channel_id != channel.pk:
        raise PlaygroundError("A reply must answer a message of the same channel.")
    ids = allocate_snowflakes(1 + len(uploads), now_ms)
    stored = _save_uploads(ids[0], uploads, ids[1:])
    try:
        with transaction.atomic():
            return PlaygroundMessage.objects.create(
                channel=channel,
                disc_id=ids[0],
                author_disc_id=author_disc_id,
                content=content,
                created_at_ms=now_ms,
                reply_to=reply_to,
                attachments=stored,
                turn_pending=True,
            )
    except BaseException:
        # No message, no files: an upload whose message was refused would be kept by nothing.
        for attachment in stored:
            attachment_path(attachment).unlink(missing_ok=True)
        raise


def store_bot_message(
    channel: PlaygroundChannel,
    text: str,
    *,
    persona: PersonaInfo | None,
    bot_user: Author,
    reply_to: PlaygroundMessage | None,
    now_ms: int,
    embeds: list[dict[str, object]] | None = None,
) -> PlaygroundMessage:
    """What the platform posts: a persona's reply (the main persona as the bot account, an alter
    through the channel webhook under its own name, as ``bot.discord.delivery`` does on Discord), or a
    notice of the bot itself when ``persona`` is None; ``embeds``: a tool's confirmation notices."""
    [message_id] = allocate_snowflakes(1, now_ms)
    via_webhook = persona is not None and persona.is_alter
    return PlaygroundMessage.objects.create(
        channel=channel,
        disc_id=message_id,
        author_disc_id=channel.webhook_disc_id if via_webhook else bot_user.id,
        author_name=persona.persona_nickname if persona else (bot_user.display_name or bot_user.username),
        persona_id=persona.persona_id if persona else None,
        webhook_disc_id=channel.webhook_disc_id if via_webhook else "",
        is_bot=True,
        content=text,
        created_at_ms=now_ms,
        reply_to=reply_to,
        embeds=embeds or [],
    )


def store_as_member(channel: PlaygroundChannel, text: str, *, name: str, now_ms: int) -> PlaygroundMessage:
    """A message the platform posts under a member's name (``/impersonate``): through the channel
    webhook with the member's display name as its username, as Discord shows it."""
    [message_id] = allocate_snowflakes(1, now_ms)
    return PlaygroundMessage.objects.create(
        channel=channel,
        disc_id=message_id,
        author_disc_id=channel.webhook_disc_id,
        author_name=name[:100],
        webhook_disc_id=channel.webhook_disc_id,
        is_bot=True,
        content=text,
        created_at_ms=now_ms,
    )


def react_as_bot(channel: PlaygroundChannel, message_disc_id: str, emoji: str, bot_id: str) -> PlaygroundMessage | None:
    """The bot's reaction on a message of the channel (kept when it reacted so already); None when
    the channel has no such message."""
    row = PlaygroundMessage.objects.filter(channel=channel, disc_id=message_disc_id).first()
    if row is None:
        return None
    already = any(r.get("emoji") == emoji and bot_id in r.get("users", []) for r in row.reactions or [])
    return row if already else toggle_reaction(row, emoji, bot_id)


def note_message(row: PlaygroundMessage, *, skip_reason: str = "", transcription_failure: str = "") -> None:
    """Keep why a message was not answered or transcribed (``bot.playground.notes``); a skip ends
    its turn."""
    fields: dict[str, object] = {"skip_reason": skip_reason, "turn_pending": False} if skip_reason else {}
    if transcription_failure:
        fields["transcription_failure"] = transcription_failure
    PlaygroundMessage.objects.filter(pk=row.pk).update(**fields)
    for name, value in fields.items():
        setattr(row, name, value)


def end_turn(row: PlaygroundMessage) -> None:
    """The message's turn is done. A process that started meanwhile took it for a dead process's
    turn (several web processes) and noted it as interrupted: the note goes, the reply is there."""
    restarted = Case(When(skip_reason=SERVER_RESTARTED, then=Value("")), default=F("skip_reason"))
    PlaygroundMessage.objects.filter(pk=row.pk).update(turn_pending=False, skip_reason=restarted)


def note_interrupted_turns() -> int:
    """At a web process's start: note every message whose turn was in flight when a process died
    (``kill -9``, a crash, a restart mid-stream), which would otherwise stay unanswered in silence;
    returns how many."""
    return PlaygroundMessage.objects.filter(turn_pending=True).update(turn_pending=False, skip_reason=SERVER_RESTARTED)


def toggle_reaction(message: PlaygroundMessage, emoji: str, user_disc_id: str) -> PlaygroundMessage:
    """Add the user's reaction, or take it back when they already reacted with that emoji."""
    emoji = emoji.strip()
    if not emoji or len(emoji) > 32:
        raise PlaygroundError("Pick one emoji.")
    with transaction.atomic():
        current = PlaygroundMessage.objects.select_for_update().get(pk=message.pk)
        reactions = [dict(r) for r in current.reactions or []]
        entry = next((r for r in reactions if r.get("emoji") == emoji), None)
        if entry is None:
            reactions.append({"emoji": emoji, "users": [user_disc_id]})
        elif user_disc_id in entry["users"]:
            entry["users"] = [u for u in entry["users"] if u != user_disc_id]
        else:
            entry["users"] = [*entry["users"], user_disc_id]
        current.reactions = [r for r in reactions if r["users"]]
        current.save(update_fields=["reactions"])
    return current
