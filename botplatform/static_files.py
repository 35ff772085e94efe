"""``/static/`` served by the process (``serve`` with DEBUG on or ``--serve-static``).

Django's handler turns only a missing file into a 404: a path that climbs out of the static folders
(``/static/%2e%2e/…``) makes the finders raise ``SuspiciousFileOperation``, which it let through as
a 500. It is answered the way Django answers every suspicious request: 400, logged on
``django.security``.
"""

from __future__ import annotations

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.exception import response_for_exception
from django.http import HttpRequest, HttpResponseBase


class StaticFilesHandler(ASGIStaticFilesHandler):
    # The stub types serve by what Django's own body returns; its callers (get_response) take any
    # HttpResponseBase, which is what the 400 page from response_for_exception is.
    def serve(self, request: HttpRequest) -> HttpResponseBase:  # type: ignore[override]
        try:
            return super().serve(request)
        except SuspiciousOperation as exc:
            return response_for_exception(request, exc)
