"""What every API router shares: authentication, the caller's principal, documented errors, paging.

Kept apart from ``botplatform.api`` (which builds the NinjaAPI and mounts the routers) so routers
can import it without an import cycle.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Path, Schema
from ninja.errors import AuthenticationError, HttpError
from ninja.pagination import LimitOffsetPagination
from ninja.security import HttpBearer, SessionAuth

from personas.access import Principal, principal_for_token, principal_for_user


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
AUTH_ERRORS: dict[int, Any] = {401: ErrorOut, 422: ErrorOut}
READ_ERRORS: dict[int, Any] = {**AUTH_ERRORS, 404: ErrorOut}
WRITE_ERRORS: dict[int, Any] = {**READ_ERRORS, 400: ErrorOut, 403: ErrorOut}


# Ids are 64-bit in every table; a larger number cannot name anything.
MAX_ID = 2**63 - 1
Id = Annotated[int, Path(ge=1, le=MAX_ID)]


class BoundedPagination(LimitOffsetPagination):
    """Limit/offset pages with bounds, so a huge offset is a 422 rather than a database error."""

    class Input(Schema):
        limit: int = Field(50, ge=1, le=200)
        offset: int = Field(0, ge=0, le=10**9)


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
