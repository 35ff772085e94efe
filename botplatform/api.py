"""The django-ninja API under /api/v1/, docs at /api/docs.

Auth: a per-server bearer token (`Authorization: Bearer tmr_…`) or a staff admin session. Both
resolve to a ``personas.access.Principal``; routers scope every query through it.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.core.exceptions import ValidationError
from django.db import DataError, connection
from django.http import HttpRequest, HttpResponse
from ninja import Field, NinjaAPI, Path, Schema, Status
from ninja.errors import AuthenticationError, HttpError
from ninja.pagination import LimitOffsetPagination
from ninja.security import HttpBearer, SessionAuth

from personas.access import Principal, principal_for_token, principal_for_user


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Principal | None:
        return principal_for_token(token)


class StaffSessionAuth(SessionAuth):
    def authenticate(self, request: HttpRequest, key: str | None) -> Principal | None:
        return principal_for_user(getattr(request, "user", None))


api = NinjaAPI(
    title="Tomori Platform API",
    version="1",
    description="Prompt records, personas and per-user controls for moderators' dashboards. "
    "Objects outside the caller's servers answer 404.",
    docs_url="/docs",
    urls_namespace="api",
    auth=[TokenAuth(), StaffSessionAuth()],
)


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


class HealthOut(Schema):
    status: str


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


@api.get("/v1/health", tags=["health"], auth=None, response={200: HealthOut, 503: ErrorOut})
def health(request: HttpRequest) -> Status:
    """Liveness: the process answers and the database is reachable."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return Status(503, {"detail": "database unreachable"})
    return Status(200, {"status": "ok"})


def _bad_request(request: HttpRequest, exc: Any) -> HttpResponse:
    """Refusals of the actions layer (limits, empty text, bad lineage) are the caller's error."""
    message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
    return api.create_response(request, {"detail": message}, status=400)


def _register_routers() -> None:
    from personas.actions import ActionError

    api.add_exception_handler(ActionError, _bad_request)
    api.add_exception_handler(ValidationError, _bad_request)
    api.add_exception_handler(DataError, _bad_request)

    from chatcontext.api import router as records_router
    from personas.api import router as servers_router

    api.add_router("/v1/", servers_router)
    api.add_router("/v1/", records_router)


_register_routers()
