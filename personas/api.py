"""Servers, personas and per-user controls for dashboards (thin views over personas.actions).

Every lookup goes through the caller's principal: an object of another server is a 404.
Personal memories are shown per server: only lineages of that server's personas, never lineage 0
(global memories may come from other servers, so no single server's moderators own them).
"""

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from ninja.pagination import paginate

from personas import actions
from personas.api_common import (
    AUTH_ERRORS,
    MAX_ID,
    READ_ERRORS,
    WRITE_ERRORS,
    BoundedPagination,
    DiscordId,
    DiscordIdPath,
    Integer,
    MemoryId,
    NotFound,
    ReminderId,
    ServerKey,
    Text,
    get_or_404,
    principal,
    require_write,
    server_lookup,
)
from personas.models import (
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PrivacyLevel,
    Reminder,
    Server,
    ServerMember,
)
from personas.models.moderation import BLACKLIST_REASON_CHARS
from personas.user_export import build_user_export

router = Router(tags=["servers"])

ReminderStatus = Annotated[
    Reminder.Status | None, Query(description="Only reminders in this state; empty = every state.")
]


def _writer(request: HttpRequest) -> actions.Actor:
    """The caller of a write, as the audit trail records it: a token, or a staff session's account."""
    who = require_write(request)
    return actions.Actor.api(account=who.user, token=who.token)


class ServerOut(Schema):
    server_id: int
    server_disc_id: str
    name: str
    description: str
    is_dm_channel: bool


class PersonaOut(Schema):
    persona_id: int
    persona_nickname: str
    is_alter: bool
    persona_lineage_id: int
    trigger_words: list[str]


class PrivacyOut(Schema):
    user_disc_id: str
    privacy_level: int
    privacy_label: str


class PrivacyIn(Schema):
    privacy_level: int = Field(..., ge=0, le=2, description="0 minimal, 1 partial, 2 full")


class MemoryOut(Schema):
    personal_memory_id: int
    user_disc_id: str
    persona_lineage_id: int
    content: str
    tags: list[str]
    created_at: datetime
    updated_at: datetime


class MemoryIn(Schema):
    persona_id: Integer = Field(..., ge=1, le=MAX_ID, description="The persona whose lineage remembers this")
    content: Text = Field(..., min_length=1, max_length=1000)
    tags: list[Text] = Field(default_factory=list, max_length=20)


class MemoryPatch(Schema):
    content: Text | None = Field(None, min_length=1, max_length=1000)
    tags: list[Text] | None = Field(None, max_length=20)


class ReminderOut(Schema):
    reminder_id: int
    channel_disc_id: str
    user_discord_id: str
    reminder_purpose: str
    reminder_time: datetime
    repetition_interval_hours: int | None
    self_reminder: bool
    persona_id: int | None
    status: str


class BlacklistOut(Schema):
    user_disc_id: str
    reason: str
    created_at: datetime


class BlacklistIn(Schema):
    user_disc_id: DiscordId
    reason: Text = Field("", max_length=BLACKLIST_REASON_CHARS)


class ForgetOut(Schema):
    user_disc_id: str
    deleted: dict[str, int]


class ForgetPreviewOut(Schema):
    user_disc_id: str
    would_delete: dict[str, int]


def _server(request: HttpRequest, server_id: str) -> Server:
    return get_or_404(principal(request).scope(Server.objects.all(), "server_id"), "server", **server_lookup(server_id))


def _lineages(server: Server) -> list[int]:
    return list(server.personas.values_list("persona_lineage_id", flat=True))


def _member_user(server: Server, user_disc_id: str) -> DiscordUser:
    """A user this server knows: a member, or someone its personas remember."""
    known = (
        ServerMember.objects.filter(server=server, user_disc_id=user_disc_id).exists()
        or PersonalMemory.objects.filter(
            user__user_disc_id=user_disc_id, persona_lineage_id__in=_lineages(server)
        ).exists()
    )
    user = DiscordUser.objects.filter(user_disc_id=user_disc_id).first() if known else None
    if user is None:
        raise NotFound("No such user in this server.")
    return user


def _memory_out(memory: PersonalMemory, user_disc_id: str) -> dict[str, object]:
    return {
        "personal_memory_id": memory.personal_memory_id,
        "user_disc_id": user_disc_id,
        "persona_lineage_id": memory.persona_lineage_id,
        "content": memory.content,
        "tags": [str(t) for t in memory.tags or []],
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
    }


@router.get("/servers", response={200: list[ServerOut], **AUTH_ERRORS})
@paginate(BoundedPagination)
def list_servers(request: HttpRequest):  # type: ignore[no-untyped-def]
    return principal(request).scope(Server.objects.order_by("server_id"), "server_id")


@router.get("/servers/{server_id}", response={200: ServerOut, **READ_ERRORS})
def get_server(request: HttpRequest, server_id: ServerKey) -> Server:
    return _server(request, server_id)


@router.get("/servers/{server_id}/personas", response={200: list[PersonaOut], **READ_ERRORS})
def list_personas(request: HttpRequest, server_id: ServerKey) -> list[Persona]:
    return list(_server(request, server_id).personas.order_by("is_alter", "persona_id"))


@router.get("/servers/{server_id}/users/{user_disc_id}/privacy", response={200: PrivacyOut, **READ_ERRORS})
def get_privacy(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, object]:
    user = _member_user(_server(request, server_id), user_disc_id)
    return {
        "user_disc_id": user.user_disc_id,
        "privacy_level": user.privacy_level,
        "privacy_label": PrivacyLevel(user.privacy_level).label,
    }


@router.put("/servers/{server_id}/users/{user_disc_id}/privacy", response={200: PrivacyOut, **WRITE_ERRORS})
def set_privacy(
    request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath, body: PrivacyIn
) -> dict[str, object]:
    actor = _writer(request)
    user = _member_user(_server(request, server_id), user_disc_id)
    user = actions.set_privacy_level(user, body.privacy_level, actor=actor)
    return {
        "user_disc_id": user.user_disc_id,
        "privacy_level": user.privacy_level,
        "privacy_label": PrivacyLevel(user.privacy_level).label,
    }


@router.get("/servers/{server_id}/users/{user_disc_id}/memories", response={200: list[MemoryOut], **READ_ERRORS})
def list_memories(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> list[dict[str, object]]:
    server = _server(request, server_id)
    user = _member_user(server, user_disc_id)
    rows = PersonalMemory.objects.filter(user=user, persona_lineage_id__in=_lineages(server)).order_by(
        "-created_at", "-personal_memory_id"
    )
    return [_memory_out(m, user.user_disc_id) for m in rows]


@router.post("/servers/{server_id}/users/{user_disc_id}/memories", response={201: MemoryOut, **WRITE_ERRORS})
def create_memory(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath, body: MemoryIn) -> Status:
    actor = _writer(request)
    server = _server(request, server_id)
    user = _member_user(server, user_disc_id)
    persona = get_or_404(Persona, "persona on this server", server=server, persona_id=body.persona_id)
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, body.content, body.tags, actor=actor)
    return Status(201, _memory_out(memory, user.user_disc_id))


def _server_memory(server: Server, memory_id: int) -> PersonalMemory:
    return get_or_404(
        PersonalMemory.objects.select_related("user"),
        "memory on this server",
        personal_memory_id=memory_id,
        persona_lineage_id__in=_lineages(server),
    )


@router.patch("/servers/{server_id}/memories/{memory_id}", response={200: MemoryOut, **WRITE_ERRORS})
def update_memory(
    request: HttpRequest, server_id: ServerKey, memory_id: MemoryId, body: MemoryPatch
) -> dict[str, object]:
    actor = _writer(request)
    memory = _server_memory(_server(request, server_id), memory_id)
    memory = actions.update_personal_memory(memory, content=body.content, tags=body.tags, actor=actor)
    return _memory_out(memory, memory.user.user_disc_id)


@router.delete("/servers/{server_id}/memories/{memory_id}", response={204: None, **WRITE_ERRORS})
def delete_memory(request: HttpRequest, server_id: ServerKey, memory_id: MemoryId) -> Status:
    actor = _writer(request)
    actions.delete_personal_memory(_server_memory(_server(request, server_id), memory_id), actor=actor)
    return Status(204, None)


@router.get("/servers/{server_id}/reminders", response={200: list[ReminderOut], **READ_ERRORS})
@paginate(BoundedPagination)
def list_reminders(request: HttpRequest, server_id: ServerKey, status: ReminderStatus = None):  # type: ignore[no-untyped-def]
    rows = Reminder.objects.filter(server=_server(request, server_id)).order_by("reminder_time", "reminder_id")
    return rows.filter(status=status) if status else rows


@router.delete("/servers/{server_id}/reminders/{reminder_id}", response={204: None, **WRITE_ERRORS})
def cancel_reminder(request: HttpRequest, server_id: ServerKey, reminder_id: ReminderId) -> Status:
    actor = _writer(request)
    reminder = get_or_404(
        Reminder, "reminder on this server", server=_server(request, server_id), reminder_id=reminder_id
    )
    actions.cancel_reminder(reminder, actor=actor)
    return Status(204, None)


@router.get("/servers/{server_id}/blacklist", response={200: list[BlacklistOut], **READ_ERRORS})
@paginate(BoundedPagination)
def list_blacklist(request: HttpRequest, server_id: ServerKey):  # type: ignore[no-untyped-def]
    return PersonalizationBlacklist.objects.filter(server=_server(request, server_id)).order_by("user_disc_id")


@router.post("/servers/{server_id}/blacklist", response={201: BlacklistOut, **WRITE_ERRORS})
def add_blacklist(request: HttpRequest, server_id: ServerKey, body: BlacklistIn) -> Status:
    actor = _writer(request)
    entry = actions.add_to_blacklist(_server(request, server_id), body.user_disc_id, reason=body.reason, actor=actor)
    return Status(201, entry)


@router.delete("/servers/{server_id}/blacklist/{user_disc_id}", response={204: None, **WRITE_ERRORS})
def remove_blacklist(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> Status:
    actor = _writer(request)
    server = _server(request, server_id)
    get_or_404(PersonalizationBlacklist, "blacklist entry on this server", server=server, user_disc_id=user_disc_id)
    actions.remove_from_blacklist(server, user_disc_id, actor=actor)
    return Status(204, None)


@router.post("/servers/{server_id}/users/{user_disc_id}/forget", response={200: ForgetOut, **WRITE_ERRORS})
def forget_user(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, object]:
    """Forget-me (the user's right to erasure, so it is not limited to this server): their memories,
    reminders and every stored record or snapshot containing their text, in one transaction."""
    actor = _writer(request)
    _member_user(_server(request, server_id), user_disc_id)
    result = actions.forget_user(user_disc_id, actor=actor)
    return {"user_disc_id": user_disc_id, "deleted": result.as_dict()}


@router.get("/servers/{server_id}/users/{user_disc_id}/forget", response={200: ForgetPreviewOut, **WRITE_ERRORS})
def preview_forget_user(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, object]:
    """What the POST would delete now, by the same counts, with nothing deleted: the numbers to confirm
    before forgetting someone. It needs a write token, as the POST does: the counts span every server,
    so only a principal that may forget the user is shown them."""
    actor = _writer(request)
    _member_user(_server(request, server_id), user_disc_id)
    preview = actions.preview_forget_user(user_disc_id, actor=actor)
    return {"user_disc_id": user_disc_id, "would_delete": preview.as_dict()}


@router.get("/servers/{server_id}/users/{user_disc_id}/export", response={200: dict[str, Any], **READ_ERRORS})
def export_user(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, Any]:
    """What the personas know about the user on this server, as the admin's user view shows it and its
    download gives it (one builder, ``personas.user_export``): privacy level and what it hides, memories
    by lineage with the global ones (lineage 0 reaches this server's prompts), naming preferences,
    reminders for or by them, persona blocks, blacklist entries and the newest prompt records about
    them. Nothing of another server."""
    server = _server(request, server_id)
    return build_user_export(_member_user(server, user_disc_id), frozenset({server.pk}))
