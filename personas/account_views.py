"""Where a new moderator chooses their password: the link ``add_moderator`` hands out
(``personas.access.set_password_link``). Django's password-reset confirmation views, framed like
the admin and ending at the admin's sign-in page; no e-mail is involved."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import reverse, reverse_lazy


class SetPasswordView(auth_views.PasswordResetConfirmView):
    success_url = reverse_lazy("set_password_done")
    title = "Choose your password"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**admin.site.each_context(self.request), **super().get_context_data(**kwargs)}


class SetPasswordDoneView(auth_views.PasswordResetCompleteView):
    title = "Password set"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = {**admin.site.each_context(self.request), **super().get_context_data(**kwargs)}
        context["login_url"] = reverse("admin:login")
        return context
