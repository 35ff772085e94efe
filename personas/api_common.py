"""What every API router shares: authentication, the caller's principal, documented errors, paging.

Kept apart from ``botplatform.api`` (which builds the NinjaAPI and mounts the routers) so routers
can import it without an import cycle.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest
from ninja import Field, Path, Schema
from ninja.errors import AuthenticationError, HttpError
from ninja.pagination import LimitOffsetPagination
from ninja.security import HttpBearer, SessionAuth
from pydantic import AfterValidator, BeforeValidator
from pydantic_core import PydanticCustomError

from personas.access import Principal, principal_for_token, principal_for_user
from personas.validators import DISCORD_ID_MESSAGE, DISCORD_ID_PATTERN


class TokenAuth(HttpBearer):
    """``Authorization: Bearer tmr_…``. The header is read here, not by ``HttpBearer.__call__``:
    with DEBUG on, ninja logs a header of any other scheme whole (``Unexpected auth - '…'``), and
    a real token sent as ``Token tmr_…`` or ``Basic …`` must not reach a log line in any form."""

    def __call__(self, request: HttpRequest) -> Principal | None:
        scheme, _, token = request.headers.get(self.header, "").partition(" ")
        if scheme.lower() != self.openapi_scheme or not token:
            return None
        return self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> Principal | None:
        return principal_for_token(token)


class StaffSessionAuth(SessionAuth):
    def authenticate(self, request: HttpRequest, key: str | None) -> Principal | None:
        return principal_for_user(getattr(request, "user", None))


class ErrorOut(Schema):
    detail: Any


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


class BoundedPagination(LimitOffsetPagination):
    """Limit/offset pages with bounds, so a huge offset is a 422 rather than a database error."""

    class Input(Schema):
        limit: Integer = Field(50, ge=1, le=200, description="Items per page, 1–200.")
        offset: Integer = Field(0, ge=0, le=10**9, description="Items to skip: the next page starts at offset + limit.")


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
