"""Error pages with DEBUG on: what production shows, except to superusers.

With DEBUG on Django answers a 404 with its technical page: the exception's message, the view that
raised it and, for an address no route matches, every URL pattern of the site. ``make run`` serves
with DEBUG on, so a moderator who opens another server's object (a 404 by design, personas.access)
would read the site's whole map. This middleware gives everyone but a signed-in superuser the page
production gives (``handler404``, ``templates/404.html``); a superuser already sees every server and
runs the installation, and keeps Django's page to debug a route. With DEBUG off it does nothing.

A server error (500) with DEBUG on is worse: Django's technical page prints the settings, and
``DATABASE_URL``, ``REDIS_URL`` and ``CELERY_BROKER_URL`` hold passwords. Django builds that page
through ``DEFAULT_EXCEPTION_REPORTER`` on every path an exception can take (views, middleware, the
ASGI handler), so the reporter below is the one gate: everyone but a signed-in superuser gets
``handler500``'s page, and even a superuser's page shows no credential of a URL
(``CredentialMaskingFilter``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, get_resolver
from django.utils.safestring import SafeString, mark_safe
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter


def technical_page_allowed(request: HttpRequest | None) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_superuser)


def error_handler(request: HttpRequest, status: int) -> Callable[..., HttpResponse]:
    return get_resolver(getattr(request, "urlconf", None)).resolve_error_handler(status)


class PlainNotFoundMiddleware:
    """Goes after the authentication middleware (it asks who is signed in)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.plain(request):
            # An address no route matches fails before any view runs, where process_exception is
            # not asked: resolve it here first (the same resolver the handler uses next).
            try:
                get_resolver(getattr(request, "urlconf", None)).resolve(request.path_info)
            except Resolver404 as exc:
                return self.not_found(request, exc)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Http404) and self.plain(request):
            return self.not_found(request, exception)
        return None

    @staticmethod
    def plain(request: HttpRequest) -> bool:
        return settings.DEBUG and not technical_page_allowed(request)

    @staticmethod
    def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
        return error_handler(request, 404)(request, exception)


# The userinfo of a URL ("postgres://user:password@host"): Django's filter hides settings by name
# (KEY, PASS, …), and neither DATABASE_URL nor CACHES' LOCATION nor the channel layer's address
# has such a name.
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


class CredentialMaskingFilter(SafeExceptionReporterFilter):
    """Django's filter, and the credentials of every URL in a setting or request header masked."""

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)
        if isinstance(cleansed, str):  # a lazy string too (django-axes' settings), hence str()
            return _URL_CREDENTIALS.sub(self.cleansed_substitute + "@", str(cleansed))
        return cleansed


class SuperuserExceptionReporter(ExceptionReporter):
    """Django's technical 500 page for a signed-in superuser; ``handler500``'s page for anyone else."""

    def get_traceback_html(self) -> SafeString:
        if technical_page_allowed(self.request):
            return super().get_traceback_html()
        return self._plain_page()

    def get_traceback_text(self) -> SafeString:
        if technical_page_allowed(self.request):
            return super().get_traceback_text()
        return mark_safe("Server Error (500)")

    def _plain_page(self) -> SafeString:
        # Safe as Django's own page is: HTML already rendered (handler500's template) or a fixed line.
        if self.request is None:
            return mark_safe("<h1>Server Error (500)</h1>")
        return mark_safe(error_handler(self.request, 500)(self.request).content.decode())
