"""The API's forget-me and export of one user (``/api/v1/servers/{id}/users/{id}/…``): thin views
over ``community.forget`` and ``community.export``, scoped like every servers endpoint (an object
of another server is a 404).

The operation ids are those the endpoints had when they lived in ``personas.api``, so clients
generated from the schema keep working.
"""

from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema

from community import forget
from community.export import build_user_export
from personas.api_common import (
    EXAMPLE_TIME,
    EXAMPLE_USER_DISC_ID,
    READ_ERRORS,
    WRITE_ERRORS,
    DiscordIdPath,
    ServerKey,
    examples,
    member_user,
    scoped_server,
    writer,
)
from personas.models import PrivacyLevel

router = Router(tags=["servers"])

DELETED_HELP = "Rows by kind (memories, reminders, prompt records, …) and how many"
FORGET_EXAMPLE = {"personal_memories": 3, "reminders": 1, "prompt_records": 12}


class ForgetOut(Schema):
    model_config = examples({"user_disc_id": EXAMPLE_USER_DISC_ID, "deleted": FORGET_EXAMPLE})
    user_disc_id: str = Field(description="Discord id of the forgotten user.")
    deleted: dict[str, int] = Field(description=f"{DELETED_HELP} were deleted, on every server.")


class ForgetPreviewOut(Schema):
    model_config = examples({"user_disc_id": EXAMPLE_USER_DISC_ID, "would_delete": FORGET_EXAMPLE})
    user_disc_id: str = Field(description="Discord id of the user.")
    would_delete: dict[str, int] = Field(description=f"{DELETED_HELP} a POST would delete now, on every server.")


@router.post(
    "/servers/{server_id}/users/{user_disc_id}/forget",
    response={200: ForgetOut, **WRITE_ERRORS},
    operation_id="personas_api_forget_user",
)
def forget_user(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, object]:
    """Forget-me (the user's right to erasure, so it is not limited to this server): their memories,
    reminders and every stored record or snapshot containing their text, in one transaction."""
    actor = writer(request)
    member_user(scoped_server(request, server_id), user_disc_id)
    result = forget.forget_user(user_disc_id, actor=actor)
    return {"user_disc_id": user_disc_id, "deleted": result.as_dict()}


@router.get(
    "/servers/{server_id}/users/{user_disc_id}/forget",
    response={200: ForgetPreviewOut, **WRITE_ERRORS},
    operation_id="personas_api_preview_forget_user",
)
def preview_forget_user(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, object]:
    """What the POST would delete now, by the same counts, with nothing deleted: the numbers to confirm
    before forgetting someone. It needs a write token, as the POST does: the counts span every server,
    so only a principal that may forget the user is shown them."""
    actor = writer(request)
    member_user(scoped_server(request, server_id), user_disc_id)
    preview = forget.preview_forget_user(user_disc_id, actor=actor)
    return {"user_disc_id": user_disc_id, "would_delete": preview.as_dict()}


EXPORT_EXAMPLE = {
    "format": "tomori-user-export/1",
    "scope": [1],
    "user": {"user_disc_id": EXAMPLE_USER_DISC_ID, "username": "mina", "global_name": "Mina", "language": "en"},
    "privacy": {"level": 0, "name": "Minimal", "label": PrivacyLevel(0).label, "hides": "Nothing."},
    "servers": [{"server_id": 1, "name": "Night Owls"}],
    "memories": [{"lineage_id": 10000, "memories": [{"content": "Mina plays jazz piano on Sundays"}]}],
    "naming_preferences": [],
    "reminders": [],
    "persona_blocks": [],
    "blacklist": [],
    "prompt_records": [{"id": 1201, "created_at": EXAMPLE_TIME}],
}


@router.get(
    "/servers/{server_id}/users/{user_disc_id}/export",
    response={200: dict[str, Any], **READ_ERRORS},
    openapi_extra={"responses": {200: {"content": {"application/json": {"example": EXPORT_EXAMPLE}}}}},
    operation_id="personas_api_export_user",
)
def export_user(request: HttpRequest, server_id: ServerKey, user_disc_id: DiscordIdPath) -> dict[str, Any]:
    """What the personas know about the user on this server, as the admin's user view shows it and its
    download gives it (one builder, ``community.export``): privacy level and what it hides, memories
    by lineage with the global ones (lineage 0 reaches this server's prompts), naming preferences,
    reminders for or by them, persona blocks, blacklist entries and the newest prompt records about
    them. Nothing of another server."""
    server = scoped_server(request, server_id)
    return build_user_export(member_user(server, user_disc_id), frozenset({server.pk}))
