from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from botplatform.api import api

urlpatterns = [
    # The admin is the moderators' console; the bare site address (and admin's "View site") lands there.
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("playground/", include("bot.playground.urls")),
]
