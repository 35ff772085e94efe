"""The site's routes and views that fail, for the server-error page and log tests."""

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import path

from botplatform.urls import urlpatterns as site_urlpatterns


def fails(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


def database_fails(request: HttpRequest) -> HttpResponse:
    """A database error whose message quotes the SQL with a member's words (both SQLite and
    PostgreSQL name the missing table)."""
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT 1 FROM "{request.GET["q"]}"')
    return HttpResponse()


urlpatterns = [*site_urlpatterns, path("fails/", fails), path("fails/database/", database_fails)]
