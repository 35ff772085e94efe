"""The django-ninja API under /api/v1/, docs at /api/docs.

Auth: a per-server bearer token (`Authorization: Bearer tmr_…`) or a staff admin session. Both
resolve to a ``personas.access.Principal``; routers scope every query through it
(``botplatform.api_common``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import DataError, connection
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema, Status

from botplatform.api_common import ErrorOut, StaffSessionAuth, TokenAuth
from chatcontext.api import router as records_router
from personas.actions import ActionError
from personas.api import router as servers_router

api = NinjaAPI(
    title="Tomori Platform API",
    version="1",
    description="Prompt records, personas and per-user controls for moderators' dashboards. "
    "Objects outside the caller's servers answer 404.",
    docs_url="/docs",
    urls_namespace="api",
    auth=[TokenAuth(), StaffSessionAuth()],
)


class HealthOut(Schema):
    status: str


@api.get("/v1/health", tags=["health"], auth=None, response={200: HealthOut, 503: ErrorOut})
def health(request: HttpRequest) -> Status:
    """Liveness: the process answers and the database is reachable."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return Status(503, {"detail": "database unreachable"})
    return Status(200, {"status": "ok"})


@api.exception_handler(ActionError)
@api.exception_handler(ValidationError)
@api.exception_handler(DataError)
def bad_request(request: HttpRequest, exc: Any) -> HttpResponse:
    """Refusals of the actions layer (limits, empty text, bad lineage) are the caller's error."""
    message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
    return api.create_response(request, {"detail": message}, status=400)


api.add_router("/v1/", servers_router)
api.add_router("/v1/", records_router)
