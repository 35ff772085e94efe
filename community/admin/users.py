"""The Discord user admin with what spans personas and prompt records: forget-me (the action, its
confirmation with the counts of what goes) and the user view (``user_view``)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from community.admin.user_view import UserViewAdminMixin
from community.forget import ForgetResult, forget_user, preview_forget_user
from personas.admin.history import admin_actor
from personas.admin.navigation import back_or, return_url, users_named
from personas.admin.users import DiscordUserAdmin
from personas.models import DiscordUser


@admin.register(DiscordUser)
class CommunityUserAdmin(UserViewAdminMixin, DiscordUserAdmin):
    """personas' Discord user admin, with forget-me first among the actions and the user view."""

    actions = ["forget_users", *DiscordUserAdmin.actions]

    def has_forget_permission(self, request: HttpRequest) -> bool:
        return self.moderates_any(request)

    @admin.action(
        description="Forget selected users (delete their memories, reminders and prompt records)",
        permissions=["forget"],
    )
    def forget_users(self, request: HttpRequest, queryset: QuerySet[DiscordUser]) -> HttpResponse | None:
        users = self.confirmable(request, queryset, "Forget-me")
        if users is None:
            return None
        actor = admin_actor(request)
        if request.POST.get("confirm") != "yes":
            # Forget-me is not limited to the reader's servers, so neither is the count of what goes:
            # the API's preview, which runs forget-me and rolls it back.
            previews = [(user, preview_forget_user(user.user_disc_id, actor=actor)) for user in users]
            context = {
                **self.admin_site.each_context(request),
                "title": f"Forget {users_named(users)}?",
                "users": [(user, forget_counts([result])) for user, result in previews],
                "totals": forget_counts([result for _, result in previews]) if len(users) > 1 else None,
                "opts": self.model._meta,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
                "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
                "back": return_url(request),
            }
            return TemplateResponse(request, "admin/personas/discorduser/forget_confirmation.html", context)
        results = [forget_user(user.user_disc_id, actor=actor) for user in users]
        # The prompt records are always counted: "0 prompt records" is what a moderator checks for.
        summary = ", ".join(f"{n} {kind}" for kind, n in forget_counts(results) if n or kind == "prompt records")
        self.message_user(request, f"Forgot {users_named(users)}: {summary or 'nothing was stored'}.")
        return back_or(request, None)


def forget_counts(results: list[ForgetResult]) -> list[tuple[str, int]]:
    """What forget-me deletes (or would), every kind in words with its count, summed over users."""
    totals: dict[str, int] = {}
    for result in results:
        for key, value in result.as_dict().items():
            totals[key] = totals.get(key, 0) + int(value)  # a cleared profile counts one, as in the API's answer
    return [(key.replace("_", " "), n) for key, n in totals.items()]
