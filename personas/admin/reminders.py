"""Admin for reminders and persona self-tasks."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import pluralize

from personas import actions
from personas.admin.common import PersonaOfServerForm, excerpt
from personas.admin.history import RecordedAdmin, admin_actor
from personas.admin.scoping import (
    ServerScopedAdminMixin,
)
from personas.models import (
    Reminder,
)


class ReminderKindFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("human", "Reminder for a user"), ("self", "Persona self-task")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "human":
            return queryset.filter(self_reminder=False)
        if self.value() == "self":
            return queryset.filter(self_reminder=True)
        return queryset


@admin.register(Reminder)
class ReminderAdmin(ServerScopedAdminMixin, RecordedAdmin):
    form = PersonaOfServerForm
    list_display = [
        "reminder_id",
        "purpose",
        "kind",
        "target",
        "server",
        "persona",
        "reminder_time",
        "repetition_interval_hours",
        "delivery",
    ]
    list_display_links = ["reminder_id", "purpose"]
    list_select_related = ["server", "persona"]
    list_filter = [
        ReminderKindFilter,
        "status",
        ("server", admin.RelatedOnlyFieldListFilter),
        ("persona", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["reminder_purpose", "=user_discord_id", "user_nickname"]
    autocomplete_fields = ["server", "persona", "created_by_user"]
    date_hierarchy = "reminder_time"
    show_full_result_count = False
    actions = ["cancel_reminders", "retry_reminders"]
    # Delivery state is the dispatcher's (personas.reminder_firing): shown, never edited by hand.
    delivery_fields = ["delivery", "next_attempt_at", "delivery_retry_count", "last_error"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "server",
                    "channel_disc_id",
                    "persona",
                    "user_discord_id",
                    "user_nickname",
                    "self_reminder",
                    "reminder_purpose",
                    "reminder_time",
                    "repetition_interval_hours",
                    "created_by_user",
                ]
            },
        ),
        ("Delivery", {"fields": tuple(delivery_fields)}),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Reminder | None = None) -> list[str]:
        # Who set it is history; a field limited to the reader's users would blank a creator it cannot list.
        return [*self.delivery_fields, *(["created_by_user"] if obj is not None else [])]

    @admin.display(description="delivery", ordering="status")
    def delivery(self, obj: Reminder) -> str:
        """The status, and for a failed or retried one how many attempts failed and why."""
        if obj.status == Reminder.Status.FAILED:
            attempts = obj.delivery_retry_count
            return f"failed after {attempts} attempt{pluralize(attempts)}: {obj.last_error}"
        if obj.last_error:
            return f"{obj.get_status_display()}, retrying after {obj.delivery_retry_count} failed: {obj.last_error}"
        return obj.get_status_display()

    @admin.display(description="purpose")
    def purpose(self, obj: Reminder) -> str:
        return excerpt(obj.reminder_purpose)

    @admin.display(description="kind", ordering="self_reminder")
    def kind(self, obj: Reminder) -> str:
        return "self-task" if obj.self_reminder else "reminder"

    @admin.display(description="target", ordering="user_discord_id")
    def target(self, obj: Reminder) -> str:
        return f"{obj.user_nickname} ({obj.user_discord_id})" if obj.user_nickname else obj.user_discord_id

    @admin.action(description="Cancel selected reminders", permissions=["change"])
    def cancel_reminders(self, request: HttpRequest, queryset: QuerySet[Reminder]) -> None:
        cancelled, refused = 0, 0
        for reminder in queryset:
            try:
                actions.cancel_reminder(reminder, actor=admin_actor(request))
                cancelled += 1
            except actions.ReminderNotCancellable:
                refused += 1
        self.message_user(request, f"Cancelled {cancelled} reminder(s).")
        if refused:
            self.message_user(request, f"{refused} had already fired and were left as they are.", messages.WARNING)

    @admin.action(description="Retry selected failed reminders", permissions=["change"])
    def retry_reminders(self, request: HttpRequest, queryset: QuerySet[Reminder]) -> None:
        retried = 0
        for reminder in queryset.filter(status=Reminder.Status.FAILED):
            actions.retry_reminder(reminder, actor=admin_actor(request))
            retried += 1
        self.message_user(request, f"{retried} failed reminder(s) will be delivered again.")
