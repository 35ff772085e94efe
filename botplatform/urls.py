from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from botplatform.api import api
from personas.account_views import SetPasswordDoneView, SetPasswordView

urlpatterns = [
    # The admin is the moderators' console; the bare site address (and admin's "View site") lands there.
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("playground/", include("bot.playground.urls")),
    # A new moderator's one-time "choose your password" link (manage.py add_moderator, the admin).
    path("account/set-password/<uidb64>/<token>/", SetPasswordView.as_view(), name="set_password"),
    path("account/set-password/done/", SetPasswordDoneView.as_view(), name="set_password_done"),
]
