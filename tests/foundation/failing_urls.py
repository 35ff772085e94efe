"""The site's routes and one view that fails, for the server-error page tests."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from botplatform.urls import urlpatterns as site_urlpatterns


def fails(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


urlpatterns = [*site_urlpatterns, path("fails/", fails)]
