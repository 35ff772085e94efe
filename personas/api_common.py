"""What every API router shares: authentication, the caller's principal, documented errors, paging.

Kept apart from ``botplatform.api`` (which builds the NinjaAPI and mounts the routers) so routers
can import it without an import cycle.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, TypeVar, get_args

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest
from ninja import Field, Path, Schema
from ninja.errors import AuthenticationError, HttpError
from ninja.pagination import LimitOffsetPagination
from ninja.security import HttpBearer, SessionAuth
from pydantic import AfterValidator, BeforeValidator, ConfigDict
from pydantic_core import PydanticCustomError

from personas.access import Principal, principal_for_token, principal_for_user
from personas.actions import Actor
from personas.models import DiscordUser, PersonalMemory, Server, ServerMember
from personas.models.access import TOKEN_PREFIX, ApiToken, hash_token
from personas.validators import DISCORD_ID_MESSAGE, DISCORD_ID_PATTERN

# Why a request was not authenticated, for its 401 (``unauthorized_detail``). Fixed sentences: the
# answer never repeats what was sent, so a mistyped token does not come back in a response or a log.
_AUTH_PROBLEM = "tomori_auth_problem"
MISSING_CREDENTIALS = (
    "Missing credentials: send an API token as `Authorization: Bearer tmr_…`, or sign in to the admin."
)
MALFORMED_HEADER = "Malformed Authorization header: it must be `Bearer ` followed by the token."
MALFORMED_TOKEN = f"Malformed token: API tokens start with `{TOKEN_PREFIX}`."
UNKNOWN_TOKEN = "Unknown token: no API token matches it (copy it again, or create one in the admin)."
REVOKED_TOKEN = "Revoked token: this API token was revoked; create a new one in the admin."
NOT_STAFF_SESSION = "Your admin session has no API access: only moderators and superusers have it."


class TokenAuth(HttpBearer):
    """``Authorization: Bearer tmr_…``. The header is read here, not by ``HttpBearer.__call__``:
    with DEBUG on, ninja logs a header of any other scheme whole (``Unexpected auth - '…'``), and
    a real token sent as ``Token tmr_…`` or ``Basic …`` must not reach a log line in any form."""

    def __call__(self, request: HttpRequest) -> Principal | None:
        header = request.headers.get(self.header)
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != self.openapi_scheme or not token.strip():
            request.__dict__[_AUTH_PROBLEM] = MALFORMED_HEADER
            return None
        return self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> Principal | None:
        if not token.strip().startswith(TOKEN_PREFIX):
            request.__dict__[_AUTH_PROBLEM] = MALFORMED_TOKEN
            return None
        who = principal_for_token(token)
        if who is None:
            revoked = ApiToken.objects.filter(token_hash=hash_token(token.strip())).exists()
            request.__dict__[_AUTH_PROBLEM] = REVOKED_TOKEN if revoked else UNKNOWN_TOKEN
        return who


def unauthorized_detail(request: HttpRequest) -> str:
    """The 401's sentence: what was wrong with the token, or with the session when none was sent."""
    problem = request.__dict__.get(_AUTH_PROBLEM)
    if problem:
        return str(problem)
    user = getattr(request, "user", None)
    return NOT_STAFF_SESSION if user is not None and user.is_authenticated else MISSING_CREDENTIALS


class StaffSessionAuth(SessionAuth):
    def authenticate(self, request: HttpRequest, key: str | None) -> Principal | None:
        return principal_for_user(getattr(request, "user", None))


class ErrorOut(Schema):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"detail": "No such server."},
                {"detail": UNKNOWN_TOKEN},
                {"detail": [{"loc": ["body", "content"], "msg": "String should have at least 1 character"}]},
            ]
        }
    )
    detail: Any = Field(
        description="What was wrong: a sentence, or for 422 a list of `{loc, msg, type}` where `loc` is where "
        'the bad value is, e.g. `["body", "content"]`.'
    )


# Documented error answers, so clients (and schemathesis) know every status an operation gives.
# 400: a NUL character in text, or a malformed request (botplatform.api); 413: an oversized body.
AUTH_ERRORS: dict[int, Any] = {400: ErrorOut, 401: ErrorOut, 422: ErrorOut}
READ_ERRORS: dict[int, Any] = {**AUTH_ERRORS, 404: ErrorOut}
WRITE_ERRORS: dict[int, Any] = {**READ_ERRORS, 403: ErrorOut, 413: ErrorOut}

# --- input types --------------------------------------------------------------------------------
# pydantic's lax parsing reads more than the schema says: "1.0", "+1" or " 1_0" as an integer, a bare
# number as seconds since the epoch. Inputs are held to what the OpenAPI schema documents.

NUL_CHARACTER = "nul_character"
_ASCII_DIGITS = re.compile("[0-9]+")
_ISO_DATE = re.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _ascii_integer(value: object) -> object:
    # A JSON body's 389.0 is an integer to JSON Schema (and to pydantic); a path or query "1.0" is not.
    if isinstance(value, bool) or (isinstance(value, str) and not _ASCII_DIGITS.fullmatch(value)):
        raise PydanticCustomError("int_parsing", "Input should be an integer written in ASCII digits")
    return value


def _iso_datetime(value: object) -> object:
    if isinstance(value, datetime) or (isinstance(value, str) and _ISO_DATE.match(value)):
        return value
    raise PydanticCustomError("datetime_parsing", "Input should be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z")


def _no_nul(value: str) -> str:
    """PostgreSQL refuses NUL in text columns and SQLite stores it: refused here, for both."""
    if "\x00" in value:
        raise PydanticCustomError(NUL_CHARACTER, "Text may not contain a NUL character")
    return value


Integer = Annotated[int, BeforeValidator(_ascii_integer)]
IsoDatetime = Annotated[datetime, BeforeValidator(_iso_datetime)]
# The pattern documents the rule for clients; the validator enforces it (a NUL is a 400, not a 422).
Text = Annotated[str, AfterValidator(_no_nul), Field(json_schema_extra={"pattern": "^[^\\x00]*$"})]
DiscordId = Annotated[str, Field(pattern=DISCORD_ID_PATTERN, description=DISCORD_ID_MESSAGE)]
DiscordIdPath = Annotated[
    str, Path(pattern=DISCORD_ID_PATTERN, description=f"The user's Discord id. {DISCORD_ID_MESSAGE}")
]

# Ids are 64-bit in every table; a larger number cannot name anything.
MAX_ID = 2**63 - 1
# Constraints before the validator: the other way round pydantic documents them as "ge", not "minimum".
RowId = Annotated[int, Field(ge=1, le=MAX_ID), BeforeValidator(_ascii_integer)]


def _row_id_path(description: str) -> Any:
    return Path(ge=1, le=MAX_ID, description=description)


MemoryId = Annotated[Integer, _row_id_path("The memory's personal_memory_id, as the memory lists give it.")]
ReminderId = Annotated[Integer, _row_id_path("The reminder's reminder_id, as the reminder list gives it.")]
RecordId = Annotated[Integer, _row_id_path("The prompt record's id, as the record list gives it.")]

# A server is named by the id people know, its Discord id, or by the platform's own server_id.
# Discord ids are snowflakes of 17 to 20 digits (every id since 2015); a server_id is a row number,
# which stays far below 17 digits, so the length alone tells them apart.
SNOWFLAKE_MIN_DIGITS = 17
SERVER_KEY_PATTERN = "^[0-9]{1,20}$"
SERVER_KEY_HELP = (
    "The server: its Discord id (a 17–20 digit snowflake; Discord: Developer Mode → right-click the server → "
    "Copy Server ID) or the platform's internal server_id (fewer digits; `server_id` in the answers)."
)
ServerKey = Annotated[str, Path(pattern=SERVER_KEY_PATTERN, description=SERVER_KEY_HELP)]
ServerKeyQuery = Annotated[str, Field(pattern=SERVER_KEY_PATTERN)]


def server_lookup(key: str, prefix: str = "") -> dict[str, object]:
    """The lookup of the server a ``ServerKey`` names, e.g. ``{"server_disc_id": "8301…"}``."""
    if len(key) >= SNOWFLAKE_MIN_DIGITS:
        return {f"{prefix}server_disc_id": key}
    return {f"{prefix}server_id": int(key)}


class NotFound(Http404):
    """A 404 whose message is written for the API's callers: it names the kind of thing in their
    words, never a model (Django's own "No PromptRecord matches the given query")."""


M = TypeVar("M", bound=Model)


def get_or_404(rows: type[M] | QuerySet[M], what: str, **lookup: Any) -> M:
    queryset = rows._default_manager.all() if isinstance(rows, type) else rows
    try:
        return queryset.get(**lookup)
    except ObjectDoesNotExist:
        raise NotFound(f"No such {what}.") from None


def page_schema(schema: dict[str, Any], model: type[Any]) -> None:
    schema["properties"]["items"]["description"] = "This page's items, in the list's order."
    item = get_args(model.model_fields["items"].annotation)[0]
    extra = getattr(item, "model_config", {}).get("json_schema_extra")
    first = extra["examples"][:1] if isinstance(extra, dict) else []
    schema["examples"] = [{"items": first, "count": len(first)}]


class BoundedPagination(LimitOffsetPagination):
    """Limit/offset pages with bounds, so a huge offset is a 422 rather than a database error."""

    class Input(Schema):
        limit: Integer = Field(50, ge=1, le=200, description="Items per page, 1–200.")
        offset: Integer = Field(0, ge=0, le=10**9, description="Items to skip: the next page starts at offset + limit.")

    # ninja derives each list's Paged… schema from this one, retyping ``items`` (which drops its Field):
    # the schema hook describes it again and gives the page an example of the list's own items.
    class Output(Schema):
        model_config = ConfigDict(json_schema_extra=lambda schema, model: page_schema(schema, model))
        items: list[Any]
        count: int = Field(description="How many items the list holds in all pages: the last page ends at count.")


def principal(request: HttpRequest) -> Principal:
    auth = getattr(request, "auth", None)
    if not isinstance(auth, Principal):
        raise AuthenticationError()
    return auth


def require_write(request: HttpRequest) -> Principal:
    who = principal(request)
    if not who.can_write:
        raise HttpError(403, "This token is read-only.")
    return who


def writer(request: HttpRequest) -> Actor:
    """The caller of a write, as the audit trail records it: a token, or a staff session's account."""
    who = require_write(request)
    return Actor.api(account=who.user, token=who.token)


def scoped_server(request: HttpRequest, server_id: str) -> Server:
    """The server ``server_id`` names, if the caller's principal may see it (else a 404)."""
    return get_or_404(principal(request).scope(Server.objects.all(), "server_id"), "server", **server_lookup(server_id))


def server_lineages(server: Server) -> list[int]:
    return list(server.personas.values_list("persona_lineage_id", flat=True))


def member_user(server: Server, user_disc_id: str) -> DiscordUser:
    """A user this server knows: a member, or someone its personas remember."""
    known = (
        ServerMember.objects.filter(server=server, user_disc_id=user_disc_id).exists()
        or PersonalMemory.objects.filter(
            user__user_disc_id=user_disc_id, persona_lineage_id__in=server_lineages(server)
        ).exists()
    )
    user = DiscordUser.objects.filter(user_disc_id=user_disc_id).first() if known else None
    if user is None:
        raise NotFound("No such user in this server.")
    return user


# Example ids and times of the schemas' examples (OpenAPI "examples", shown by /api/docs).
EXAMPLE_SERVER_DISC_ID = "904493457735819273"
EXAMPLE_USER_DISC_ID = "554947007479939075"
EXAMPLE_TIME = "2026-01-31T12:00:00Z"


def examples(*values: dict[str, Any]) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": list(values)})
