"""Not-found pages with DEBUG on: what production shows, except to superusers.

With DEBUG on Django answers a 404 with its technical page: the exception's message, the view that
raised it and, for an address no route matches, every URL pattern of the site. ``make run`` serves
with DEBUG on, so a moderator who opens another server's object (a 404 by design, personas.access)
would read the site's whole map. This middleware gives everyone but a signed-in superuser the page
production gives (``handler404``, ``templates/404.html``); a superuser already sees every server and
runs the installation, and keeps Django's page to debug a route. With DEBUG off it does nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, get_resolver


def technical_404_allowed(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_superuser)


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
        return settings.DEBUG and not technical_404_allowed(request)

    @staticmethod
    def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
        view = get_resolver(getattr(request, "urlconf", None)).resolve_error_handler(404)
        response: HttpResponse = view(request, exception)
        return response
