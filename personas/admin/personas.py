"""Admin for personas and the lineage registry."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from personas.admin.common import URL_FIELD_OVERRIDES, ConsoleMedia
from personas.admin.fields import JSONTextFieldsMixin
from personas.admin.history import AuditedAdmin
from personas.admin.scoping import (
    LineageScopedAdminMixin,
    ServerScopedAdminMixin,
)
from personas.models import (
    Persona,
    PersonaAttribute,
    PersonaLineage,
)


class PersonaAttributeInline(ServerScopedAdminMixin, admin.TabularInline):
    model = PersonaAttribute
    server_field = "persona__server"
    fields = ["attribute_order", "attribute_text", "is_public"]
    ordering = ["attribute_order"]
    extra = 1


@admin.register(Persona)
class PersonaAdmin(JSONTextFieldsMixin, ServerScopedAdminMixin, AuditedAdmin):
    Media = ConsoleMedia
    formfield_overrides = URL_FIELD_OVERRIDES
    # A new persona draws a lineage or copies one of the moderator's own (never another server's memories).
    lineage_choice_fields = ("persona_lineage_id",)
    list_display = ["persona_nickname", "server", "is_alter", "persona_lineage_id", "trigger_word_list", "updated_at"]
    list_select_related = ["server"]
    list_filter = ["is_alter", "self_debug_enabled", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["persona_nickname", "server__name", "=server__server_disc_id", "=persona_lineage_id"]
    autocomplete_fields = ["server"]
    inlines = [PersonaAttributeInline]
    fieldsets = [
        (None, {"fields": ["server", "persona_nickname", "is_alter", "persona_lineage_id", "trigger_words"]}),
        ("Character", {"fields": ["persona_prompt", "sample_dialogue", "physical_appearance_tags"]}),
        (
            "Naming (per addressing style)",
            {"fields": ["naming_prefixes", "naming_suffixes", "naming_address_terms"], "classes": ["collapse"]},
        ),
        (
            "Behaviour and delivery",
            {
                "fields": ["self_debug_enabled", "webhook_avatar_url"],
                "classes": ["collapse"],
            },
        ),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Persona | None = None) -> list[str]:
        # Re-pointing a lineage would silently swap which memories the persona sees (data-model.md §2.9).
        return ["persona_lineage_id"] if obj is not None else []

    @admin.display(description="trigger words")
    def trigger_word_list(self, obj: Persona) -> str:
        return ", ".join(str(w) for w in obj.trigger_words or [])


@admin.register(PersonaLineage)
class PersonaLineageAdmin(LineageScopedAdminMixin, admin.ModelAdmin):
    """The lineage registry. Moderators read the lineages of their servers' personas; the registry is
    platform-wide (a lineage may be shared with other servers' personas), so only superusers write it."""

    lineage_field = "id"
    lineage_choice_fields = ()
    list_display = ["id", "label", "created_at"]
    search_fields = ["=id", "label"]
    readonly_fields = ["id", "created_at"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.is_superuser_session(request)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)
