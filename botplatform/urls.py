from typing import Any

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from botplatform.api import api
from personas.account_views import SetPasswordDoneView, SetPasswordView


class FaviconView(RedirectView):
    """Browsers ask every site for /favicon.ico: the console's icon from static files (resolved per
    request, so a hashed static name is found once collectstatic has run)."""

    permanent = False

    def get_redirect_url(self, *args: Any, **kwargs: Any) -> str:
        return static("personas/favicon.ico")


urlpatterns = [
    # The admin is the moderators' console; the bare site address lands there.
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
    path("favicon.ico", FaviconView.as_view()),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("playground/", include("bot.playground.urls")),
    # Imported alters' pictures, fetched by Discord for webhook posts (personas.actions.cards.avatar_url).
    path("cards/", include("characters.urls")),
    # A new moderator's one-time "choose your password" link (manage.py add_moderator, the admin).
    path("account/set-password/<uidb64>/<token>/", SetPasswordView.as_view(), name="set_password"),
    path("account/set-password/done/", SetPasswordDoneView.as_view(), name="set_password_done"),
]
