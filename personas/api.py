"""Servers, personas and per-user controls for dashboards (thin views over personas.actions).

Every lookup goes through the caller's principal: an object of another server is a 404.
Personal memories are shown per server: only lineages of that server's personas, never lineage 0
(global memories may come from other servers, so no single server's moderators own them).
"""

from datetime import datetime
from typing import Annotated

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from ninja.pagination import paginate

from personas import actions
from personas.api_common import (
    AUTH_ERRORS,
    EXAMPLE_SERVER_DISC_ID,
    EXAMPLE_TIME,
    EXAMPLE_USER_DISC_ID,
    MAX_ID,
    READ_ERRORS,
    WRITE_ERRORS,
    BoundedPagination,
    DiscordId,
    DiscordIdPath,
    Integer,
    MemoryId,
    ReminderId,
    ServerKey,
    Text,
    examples,
    get_or_404,
    member_user,
    principal,
    scoped_server,
    server_lineages,
    writer,
)
from personas.memory_text import lineage_persona_names, persona_name, user_name
from personas.models import (
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PrivacyLevel,
    Reminder,
    Server,
)
from personas.models.moderation import BLACKLIST_REASON_CHARS
from personas.values.placeholders import fill_placeholders

router = Router(tags=["servers"])

ReminderStatus = Annotated[
    Reminder.Status | None, Query(description="Only reminders in this state; empty = every state.")
]


LINEAGE_HELP = (
    "The memory namespace (lineage) of the persona that remembers: a persona and its copies share one "
    "lineage, so a memory outlives a renamed or re-created persona. Not a persona_id; 0 is global (every persona)."
)


class ServerOut(Schema):
    model_config = examples(
        {
            "server_id": 1,
            "server_disc_id": EXAMPLE_SERVER_DISC_ID,
            "name": "Night Owls",
            "description": "Late-night study group",
            "is_dm_channel": False,
        }
    )
    server_id: int = Field(description="The platform's id of the server; paths accept it or the Discord id.")
    server_disc_id: str = Field(description="The server's Discord id (a snowflake, as a string).")
    name: str = Field(description="The server's name as the bot last saw it.")
    description: str = Field(description="The operators' note about the server; may be empty.")
    is_dm_channel: bool = Field(description="True for the pseudo-server holding one user's direct messages.")


class PersonaOut(Schema):
    model_config = examples(
        {
            "persona_id": 3,
            "persona_nickname": "Tomori",
            "is_alter": False,
            "persona_lineage_id": 10000,
            "trigger_words": ["tomori", "tomo"],
        }
    )
    persona_id: int = Field(
        description="The persona's id: what `persona_id` means in memory bodies and record filters."
    )
    persona_nickname: str = Field(description="The name the persona answers as.")
    is_alter: bool = Field(description="False for the server's main persona, true for an alter (a second character).")
    persona_lineage_id: int = Field(description=LINEAGE_HELP)
    trigger_words: list[str] = Field(description="Words that make the persona answer without a mention.")


PRIVACY_LEVEL_HELP = (
    "0 minimal (full personalization), 1 partial (messages kept, no personal details), 2 full (left out)."
)


class PrivacyOut(Schema):
    model_config = examples(
        {"user_disc_id": EXAMPLE_USER_DISC_ID, "privacy_level": 1, "privacy_label": PrivacyLevel(1).label}
    )
    user_disc_id: str = Field(description="The user's Discord id.")
    privacy_level: int = Field(description=f"The level, on every server the user is on: {PRIVACY_LEVEL_HELP}")
    privacy_label: str = Field(description="The level in words.")


class PrivacyIn(Schema):
    model_config = examples({"privacy_level": 2})
    privacy_level: int = Field(..., ge=0, le=2, description=PRIVACY_LEVEL_HELP)


class MemoryOut(Schema):
    model_config = examples(
        {
            "personal_memory_id": 42,
            "user_disc_id": EXAMPLE_USER_DISC_ID,
            "persona_lineage_id": 10000,
            "content": "Mina plays jazz piano on Sundays",
            "template": "{user} plays jazz piano on Sundays",
            "tags": ["music", "jazz"],
            "created_at": EXAMPLE_TIME,
            "updated_at": EXAMPLE_TIME,
        }
    )
    personal_memory_id: int = Field(description="The memory's id, for PATCH and DELETE.")
    user_disc_id: str = Field(description="Discord id of the user the memory is about.")
    persona_lineage_id: int = Field(description=LINEAGE_HELP)
    content: str = Field(
        description="What the persona remembers as people read it: `template` with the user's and persona's "
        "current names filled in for `{user}` and `{bot}`. For showing; edit `template`.",
        examples=["Mina plays jazz piano on Sundays"],
    )
    template: str = Field(
        description="The stored text, with `{user}` and `{bot}` kept so a renamed user or persona stays named "
        "right: what POST and PATCH take as `content`. Edit this, not `content`, or the names are frozen in.",
        examples=["{user} plays jazz piano on Sundays"],
    )
    tags: list[str] = Field(description="Free-form labels of the memory.")
    created_at: datetime = Field(description="When the memory was saved (ISO 8601, UTC).")
    updated_at: datetime = Field(description="When it last changed (ISO 8601, UTC).")


MEMORY_CONTENT_HELP = (
    "What the persona should remember, 1–1000 characters. `{user}` and `{bot}` stand for the user's and "
    "persona's current names."
)
TAGS_HELP = "Up to 20 free-form labels."


class MemoryIn(Schema):
    model_config = examples({"persona_id": 3, "content": "{user} plays jazz piano on Sundays", "tags": ["music"]})
    persona_id: Integer = Field(
        ..., ge=1, le=MAX_ID, description="The persona (`persona_id` of /personas) whose lineage remembers this"
    )
    content: Text = Field(..., min_length=1, max_length=1000, description=MEMORY_CONTENT_HELP)
    tags: list[Text] = Field(default_factory=list, max_length=20, description=TAGS_HELP)


class MemoryPatch(Schema):
    model_config = examples({"content": "{user} plays jazz and blues piano"}, {"tags": ["music", "piano"]})
    content: Text | None = Field(
        None, min_length=1, max_length=1000, description=f"{MEMORY_CONTENT_HELP} Omit to keep."
    )
    tags: list[Text] | None = Field(None, max_length=20, description=f"{TAGS_HELP} Replaces the list; omit to keep.")


class ReminderOut(Schema):
    model_config = examples(
        {
            "reminder_id": 7,
            "channel_disc_id": "904494141407371278",
            "user_discord_id": EXAMPLE_USER_DISC_ID,
            "reminder_purpose": "Chemistry exam at 9",
            "reminder_time": EXAMPLE_TIME,
            "repetition_interval_hours": None,
            "self_reminder": False,
            "persona_id": 3,
            "status": "pending",
        }
    )
    reminder_id: int = Field(description="The reminder's id, for DELETE (cancel).")
    channel_disc_id: str = Field(description="Discord id of the channel the reminder is posted in.")
    user_discord_id: str = Field(description="Discord id of the user it reminds (or who set a persona's task).")
    reminder_purpose: str = Field(description="What to remind them of.")
    reminder_time: datetime = Field(description="When it is due next (ISO 8601, UTC).")
    repetition_interval_hours: int | None = Field(description="Hours between repeats; null for a one-off reminder.")
    self_reminder: bool = Field(description="True for a persona's own task rather than a reminder for a person.")
    persona_id: int | None = Field(description="The persona that delivers it; null when none is set.")
    status: str = Field(description="pending, claimed, delivering, fired, failed or cancelled.")


class BlacklistOut(Schema):
    model_config = examples(
        {"user_disc_id": EXAMPLE_USER_DISC_ID, "reason": "asked not to be remembered", "created_at": EXAMPLE_TIME}
    )
    user_disc_id: str = Field(description="Discord id of the user no persona personalizes for on this server.")
    reason: str = Field(description="Why, as the moderator wrote it; may be empty.")
    created_at: datetime = Field(description="When the entry was added (ISO 8601, UTC).")


class BlacklistIn(Schema):
    model_config = examples({"user_disc_id": EXAMPLE_USER_DISC_ID, "reason": "asked not to be remembered"})
    user_disc_id: DiscordId
    reason: Text = Field(
        "",
        max_length=BLACKLIST_REASON_CHARS,
        description=f"Why, for other moderators; up to {BLACKLIST_REASON_CHARS} characters.",
    )


def _memory_out(memory: PersonalMemory, user: DiscordUser, server: Server) -> dict[str, object]:
    """A memory as the API gives it: the text with the user's and the server's persona's names."""
    names = lineage_persona_names([memory.persona_lineage_id], server.personas.all())
    return _memory_row(memory, user, names)


def _memory_row(memory: PersonalMemory, user: DiscordUser, names: dict[int, str]) -> dict[str, object]:
    return {
        "personal_memory_id": memory.personal_memory_id,
        "user_disc_id": user.user_disc_id,
        "persona_lineage_id": memory.persona_lineage_id,
        "content": fill_placeholders(memory.content, user_name(user), persona_name(memory.persona_lineage_id, names)),
        "template": memory.content,
        "tags": [str(t) for t in memory.tags or []],
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
    }


@router.get("/servers", response={200: list[ServerOut], **AUTH_ERRORS})
@paginate(BoundedPagination)
def list_servers(request: HttpRequest):  # type: ignore[no-untyped-def]
    """The servers the caller may see: a token's one server, or a staff session's moderated servers
    (every server for a superuser)."""
    return principal(request).scope(Server.objects.order_by("server_id"), "server_id")


@router.get("/servers/{server_id}", response={200: ServerOut, **READ_ERRORS})
def get_server(request: HttpRequest, server_id: ServerKey) -> Server:
    """One server, by its Discord id or `server_id`."""
    return scoped_server(request, server_id)


@router.get("/servers/{server_id}/personas", response={200: list[PersonaOut], **READ_ERRORS})
def list_personas(request: HttpRequest, server_id: ServerKey) -> list[Persona]:
    """The server's personas, main persona first: their `persona_id` (for memory bodies and record
    filters) and `persona_lineage_id` (the memory namespace memories are listed under)."""
    return list(scoped_server(request, server_id).personas.order_by("is_alter", "persona_id"))


@router.get("/servers/{server_id}/users/{user_disc_id}/privacy", response={200: PrivacyOut, **READ_ERRORS})
def get_privacy(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, object]:
    """A user's privacy level. The user must be a member of the server or remembered by one of its personas."""
    user = member_user(scoped_server(request, server_id), user_disc_id)
    return {
        "user_disc_id": user.user_disc_id,
        "privacy_level": user.privacy_level,
        "privacy_label": PrivacyLevel(user.privacy_level).label,
    }


@router.put("/servers/{server_id}/users/{user_disc_id}/privacy", response={200: PrivacyOut, **WRITE_ERRORS})
def set_privacy(
    request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath, body: PrivacyIn
) -> dict[str, object]:
    """Set a user's privacy level (write token). It applies on every server the user is on."""
    actor = writer(request)
    user = member_user(scoped_server(request, server_id), user_disc_id)
    user = actions.set_privacy_level(user, body.privacy_level, actor=actor)
    return {
        "user_disc_id": user.user_disc_id,
        "privacy_level": user.privacy_level,
        "privacy_label": PrivacyLevel(user.privacy_level).label,
    }


@router.get("/servers/{server_id}/users/{user_disc_id}/memories", response={200: list[MemoryOut], **READ_ERRORS})
def list_memories(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> list[dict[str, object]]:
    """What the server's personas remember about a user, newest first (global memories are in the export)."""
    server = scoped_server(request, server_id)
    user = member_user(server, user_disc_id)
    rows = PersonalMemory.objects.filter(user=user, persona_lineage_id__in=server_lineages(server)).order_by(
        "-created_at", "-personal_memory_id"
    )
    names = lineage_persona_names(server_lineages(server), server.personas.all())
    return [_memory_row(m, user, names) for m in rows]


@router.post("/servers/{server_id}/users/{user_disc_id}/memories", response={201: MemoryOut, **WRITE_ERRORS})
def create_memory(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath, body: MemoryIn) -> Status:
    """Save a memory about a user for a persona's lineage (write token). Refused with 400 over the
    lineage's memory limit."""
    actor = writer(request)
    server = scoped_server(request, server_id)
    user = member_user(server, user_disc_id)
    persona = get_or_404(Persona, "persona on this server", server=server, persona_id=body.persona_id)
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, body.content, body.tags, actor=actor)
    return Status(201, _memory_out(memory, user, server))


def _server_memory(server: Server, memory_id: int) -> PersonalMemory:
    return get_or_404(
        PersonalMemory.objects.select_related("user"),
        "memory on this server",
        personal_memory_id=memory_id,
        persona_lineage_id__in=server_lineages(server),
    )


@router.patch("/servers/{server_id}/memories/{memory_id}", response={200: MemoryOut, **WRITE_ERRORS})
def update_memory(
    request: HttpRequest, server_id: ServerKey, memory_id: MemoryId, body: MemoryPatch
) -> dict[str, object]:
    """Change a memory's text or tags (write token); a field left out keeps its value."""
    actor = writer(request)
    server = scoped_server(request, server_id)
    memory = _server_memory(server, memory_id)
    memory = actions.update_personal_memory(memory, content=body.content, tags=body.tags, actor=actor)
    return _memory_out(memory, memory.user, server)


@router.delete("/servers/{server_id}/memories/{memory_id}", response={204: None, **WRITE_ERRORS})
def delete_memory(request: HttpRequest, server_id: ServerKey, memory_id: MemoryId) -> Status:
    """Delete a memory (write token). It can be restored from the admin's deleted memories."""
    actor = writer(request)
    actions.delete_personal_memory(_server_memory(scoped_server(request, server_id), memory_id), actor=actor)
    return Status(204, None)


@router.get("/servers/{server_id}/reminders", response={200: list[ReminderOut], **READ_ERRORS})
@paginate(BoundedPagination)
def list_reminders(request: HttpRequest, server_id: ServerKey, status: ReminderStatus = None):  # type: ignore[no-untyped-def]
    """The server's reminders and persona tasks, soonest first, optionally in one state."""
    rows = Reminder.objects.filter(server=scoped_server(request, server_id)).order_by("reminder_time", "reminder_id")
    return rows.filter(status=status) if status else rows


@router.delete("/servers/{server_id}/reminders/{reminder_id}", response={204: None, **WRITE_ERRORS})
def cancel_reminder(request: HttpRequest, server_id: ServerKey, reminder_id: ReminderId) -> Status:
    """Cancel a reminder (write token): it stays listed as cancelled and is never delivered."""
    actor = writer(request)
    reminder = get_or_404(
        Reminder, "reminder on this server", server=scoped_server(request, server_id), reminder_id=reminder_id
    )
    actions.cancel_reminder(reminder, actor=actor)
    return Status(204, None)


@router.get("/servers/{server_id}/blacklist", response={200: list[BlacklistOut], **READ_ERRORS})
@paginate(BoundedPagination)
def list_blacklist(request: HttpRequest, server_id: ServerKey):  # type: ignore[no-untyped-def]
    """The server's personalization blacklist: users no persona keeps memories or profile details of here."""
    return PersonalizationBlacklist.objects.filter(server=scoped_server(request, server_id)).order_by("user_disc_id")


@router.post("/servers/{server_id}/blacklist", response={201: BlacklistOut, **WRITE_ERRORS})
def add_blacklist(request: HttpRequest, server_id: ServerKey, body: BlacklistIn) -> Status:
    """Put a user on the server's personalization blacklist (write token)."""
    actor = writer(request)
    entry = actions.add_to_blacklist(
        scoped_server(request, server_id), body.user_disc_id, reason=body.reason, actor=actor
    )
    return Status(201, entry)


@router.delete("/servers/{server_id}/blacklist/{user_disc_id}", response={204: None, **WRITE_ERRORS})
def remove_blacklist(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> Status:
    """Take a user off the server's personalization blacklist (write token)."""
    actor = writer(request)
    server = scoped_server(request, server_id)
    get_or_404(PersonalizationBlacklist, "blacklist entry on this server", server=server, user_disc_id=user_disc_id)
    actions.remove_from_blacklist(server, user_disc_id, actor=actor)
    return Status(204, None)
