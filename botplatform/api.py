"""The django-ninja API under /api/v1/, docs at /api/docs.

Auth: a per-server bearer token (`Authorization: Bearer tmr_…`) or a staff admin session. Both
resolve to a ``personas.access.Principal``; routers scope every query through it
(``personas.api_common``).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, ValidationError
from django.db import DataError, connection
from django.http import Http404, HttpRequest, HttpResponse, RawPostDataException
from django.http.multipartparser import MultiPartParserError
from ninja import Field, NinjaAPI, Schema, Status, Swagger
from ninja.errors import AuthenticationError
from ninja.errors import ValidationError as InputError
from pydantic import ConfigDict

from characters.api import router as cards_router
from chatcontext.records.api import router as records_router
from community.api import router as community_router
from infrastructure.best_effort import redis_status
from personas.actions import ActionError
from personas.api import router as servers_router
from personas.api_common import (
    NUL_CHARACTER,
    ErrorOut,
    NotFound,
    StaffSessionAuth,
    TokenAuth,
    unauthorized_detail,
)

api = NinjaAPI(
    title="Tomori Platform API",
    version="1",
    description=(
        "Prompt records, personas and per-user controls for moderators' dashboards. "
        "Objects outside the caller's servers answer 404.\n\n"
        "**Tokens**: a moderator or superuser creates one in the admin, *API tokens → Add API token* "
        "(`/admin/personas/apitoken/add/`): pick the server, a name and read or read-write scope; the token "
        "(`tmr_…`) is shown once, after saving, and is sent as `Authorization: Bearer tmr_…`. Revoke it on the "
        "same page. A signed-in staff session works too (the docs page uses it).\n\n"
        "**Servers** in paths and filters are named by their Discord id (17–20 digits, *Copy Server ID*) or by "
        "the platform's `server_id` (fewer digits).\n\n"
        '**Errors** are `{"detail": …}`: a sentence, or for 422 a list of `{loc, msg, type}` where `loc` is '
        'where the bad value is, e.g. `["body", "content"]` or `["query", "since"]`.'
    ),
    docs_url="/docs",
    # Swagger UI's validator badge would send the schema to validator.swagger.io.
    docs=Swagger(settings={"validatorUrl": None}),
    urls_namespace="api",
    auth=[TokenAuth(), StaffSessionAuth()],
)


class HealthOut(Schema):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"status": "ok", "components": {"database": "ok", "redis": "ok"}}]}
    )
    status: Literal["ok", "degraded"] = Field(
        description="ok, or degraded when a component other than the database is unreachable."
    )
    components: dict[str, str] = Field(description="Each component (database, redis) and its state: ok or unreachable.")


@api.get("/v1/health", tags=["health"], auth=None, response={200: HealthOut, 503: ErrorOut})
def health(request: HttpRequest) -> Status:
    """The process answers and the database is reachable (else 503). ``degraded`` (still 200: turns
    and records work) names what is not: Redis unreachable means no live feed, no cache and, as
    Celery's broker, no background tasks."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return Status(503, {"detail": "database unreachable"})
    components = {"database": "ok", "redis": redis_status()}
    degraded = components["redis"] == "unreachable"
    return Status(200, {"status": "degraded" if degraded else "ok", "components": components})


@api.exception_handler(ActionError)
@api.exception_handler(ValidationError)
@api.exception_handler(DataError)
def bad_request(request: HttpRequest, exc: Any) -> HttpResponse:
    """Refusals of the actions layer (limits, empty text, bad lineage) are the caller's error."""
    message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
    return api.create_response(request, {"detail": message}, status=400)


def readable_location(error: dict[str, Any]) -> dict[str, Any]:
    """ninja locates a body field under the view's argument name too (``["body", "body", "content"]``);
    the caller sent no "body" key, so the location is where the value sits in what they sent."""
    loc = list(error.get("loc") or ())
    if len(loc) > 2 and loc[0] == "body" and loc[1] == "body":
        return {**error, "loc": ["body", *loc[2:]]}
    return error


@api.exception_handler(InputError)
def invalid_input(request: HttpRequest, exc: InputError) -> HttpResponse:
    """Input the schema refuses is a 422, except text that is well formed but for a NUL character:
    a 400, as PostgreSQL (which cannot store it) answered before the API refused it for SQLite too."""
    nul_only = bool(exc.errors) and all(error.get("type") == NUL_CHARACTER for error in exc.errors)
    errors = [readable_location(dict(error)) for error in exc.errors]
    return api.create_response(request, {"detail": errors}, status=400 if nul_only else 422)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(request, {"detail": unauthorized_detail(request)}, status=401)


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    """The API's own 404s say what was not found in the caller's words; any other (Django's names
    the model, "No PromptRecord matches…", and ninja adds it with DEBUG on) is a plain "Not Found"."""
    return api.create_response(request, {"detail": str(exc) if isinstance(exc, NotFound) else "Not Found"}, status=404)


@api.exception_handler(SuspiciousOperation)
def malformed_request(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    """Django's refusals of the request itself (too many query fields, …): with DEBUG on, ninja would
    answer them with a 500 and a traceback. A body above DATA_UPLOAD_MAX_MEMORY_SIZE is a 413."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return api.create_response(request, {"detail": f"Request body larger than {limit} bytes"}, status=413)
    return api.create_response(request, {"detail": "Malformed request"}, status=400)


@api.exception_handler(MultiPartParserError)
@api.exception_handler(RawPostDataException)
def form_body(request: HttpRequest, exc: Exception) -> HttpResponse:
    """The API reads JSON. A multipart body sent with a signed-in session is read as a form by the
    CSRF check first: malformed, it raised there; well formed, it was consumed, and reading the
    JSON body raised. Both were 500s."""
    return api.create_response(request, {"detail": "Request body must be JSON (application/json)"}, status=400)


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    """With DEBUG on, ninja answers an unexpected error with its traceback as text, to any caller.
    The caller gets the API's shape; the traceback goes to the request log (paths masked)."""
    logging.getLogger("django.request").error("Internal Server Error: %s", request.path, exc_info=exc)
    return api.create_response(request, {"detail": "Internal server error"}, status=500)


api.add_router("/v1/", servers_router)
api.add_router("/v1/", community_router)
api.add_router("/v1/", records_router)
api.add_router("/v1/", cards_router)
