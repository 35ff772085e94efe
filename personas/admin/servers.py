"""Admin for servers, their settings and what the bot mirrors from Discord (members, emoji, stickers)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db.models import Count, IntegerField, Model, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from personas.admin.common import ConsoleMedia
from personas.admin.fields import JSONTextFieldsMixin
from personas.admin.history import RecordedAdmin
from personas.admin.scoping import (
    ServerScopedAdminMixin,
)
from personas.admin.settings_history import SettingsHistoryMixin
from personas.models import (
    MatrixChannelLink,
    Persona,
    Server,
    ServerEmoji,
    ServerMember,
    ServerSettings,
    ServerSticker,
)

SERVER_SETTINGS_FIELDSETS: list[Any] = [
    (None, {"fields": ["message_fetch_limit", "timezone_offset", "retention_days"]}),
    (
        "Personalization and memory",
        {
            "fields": [
                "personal_memories_enabled",
                "memory_tagging_enabled",
                "channel_memory_enabled",
                "self_teaching_enabled",
                "prompt_snapshot_enabled",
            ]
        },
    ),
    (
        "Capabilities and triggers",
        {
            "fields": [
                "emoji_usage_enabled",
                "sticker_usage_enabled",
                "time_awareness_enabled",
                "deliberate_trigger_mode",
                "always_reply_enabled",
                "voice_transcript_chat_mode",
                "uncensor_injection_enabled",
                "uncensor_unicode_space_enabled",
            ]
        },
    ),
    ("Steering a conversation", {"fields": ["refresh_open_to_all", "auto_compact_enabled"]}),
    ("Channels", {"fields": ["rp_channel_ids"]}),
    (
        "Images and streaming",
        {"fields": ["model_accepts_images", "max_images_per_turn", "max_image_bytes", "stream_replies"]},
    ),
]
PROVIDER_FIELDSET_TITLE = "Model provider (empty = platform default from the environment)"
# Moderators choose the kind and, among the endpoints the operator approved, where the prompt goes.
# Only superusers name an endpoint of the server's own and give it a key: a moderator who could set a
# URL would have the operator's key (or the prompt of every member) sent wherever they like.
MODERATOR_PROVIDER_FIELDS = ["llm_provider", "llm_endpoint", "llm_fallback_endpoints", "own_endpoint"]
SUPERUSER_PROVIDER_FIELDS = [
    "llm_provider",
    "llm_endpoint",
    "llm_fallback_endpoints",
    "llm_base_url",
    "llm_model",
    "llm_context_window",
    "llm_max_reply_tokens",
    "llm_cache_hints",
    "llm_api_key",
    "clear_llm_api_key",
    "llm_input_price",
    "llm_output_price",
]


def approved_endpoint_choices() -> list[tuple[str, str]]:
    return [("", "Platform default"), *((name, name) for name in settings.LLM_APPROVED_ENDPOINTS)]


class ServerSettingsForm(forms.ModelForm):
    """What a server's moderators configure: no endpoint of its own, no key."""

    llm_endpoint = forms.ChoiceField(
        choices=approved_endpoint_choices,
        required=False,
        label="LLM endpoint",
        help_text="An endpoint the platform's operator approved (its key stays with the operator).",
    )

    class Meta:
        model = ServerSettings
        fields = [
            *(f for _, opts in SERVER_SETTINGS_FIELDSETS for f in opts["fields"]),
            "llm_provider",
            "llm_endpoint",
            "llm_fallback_endpoints",
        ]
        help_texts = {
            "llm_provider": "“Offline echo” repeats the prompt back without calling a model: for demos and tests only."
        }


class SuperuserServerSettingsForm(ServerSettingsForm):
    """A superuser may also give the server an endpoint of its own. Its key is write-only: never
    rendered (not even to the superuser), kept when left empty, and dropped with the URL it went with."""

    llm_base_url = forms.URLField(
        required=False,
        assume_scheme="https",
        label="LLM base URL",
        help_text="This server's own endpoint (used instead of the endpoint above); empty with a key: OpenAI's.",
    )
    llm_api_key = forms.CharField(
        required=False,
        label="LLM API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Never shown again once stored. Leave empty to keep the stored key; a new base URL "
        "without a new key drops it, so a key never goes to an address it was not given for.",
    )
    clear_llm_api_key = forms.BooleanField(
        required=False,
        label="Remove the stored API key",
        help_text="Tick and save to delete this server's key; its own endpoint is then called without one.",
    )

    class Meta(ServerSettingsForm.Meta):
        fields = [
            *ServerSettingsForm.Meta.fields,
            "llm_base_url",
            "llm_model",
            "llm_context_window",
            "llm_max_reply_tokens",
            "llm_cache_hints",
            "llm_api_key",
            "llm_input_price",
            "llm_output_price",
        ]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        # Here, not in clean_llm_api_key: the checkbox is cleaned after the key field.
        if cleaned.get("clear_llm_api_key"):
            cleaned["llm_api_key"] = ""
        elif not cleaned.get("llm_api_key"):
            cleaned["llm_api_key"] = "" if "llm_base_url" in self.changed_data else self.instance.llm_api_key
        if cleaned.get("llm_model") and not (cleaned.get("llm_base_url") or cleaned["llm_api_key"]):
            self.add_error(
                "llm_model", "A model goes with this server's own endpoint: set its base URL or key, or leave it empty."
            )
        window = cleaned.get("llm_context_window") or settings.LLM_CONTEXT_WINDOW
        reply = cleaned.get("llm_max_reply_tokens") or settings.LLM_MAX_REPLY_TOKENS
        if reply > window // 2:
            self.add_error("llm_max_reply_tokens", f"At most half the context window ({window // 2} tokens).")
        return cleaned

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]
        # construct_instance leaves a field alone when the POST lacks its input (a scripted client):
        # the key decided above is what is stored, also then.
        if "llm_api_key" in self.cleaned_data:
            self.instance.llm_api_key = self.cleaned_data["llm_api_key"]


class ServerSettingsInline(JSONTextFieldsMixin, ServerScopedAdminMixin, admin.StackedInline):
    model = ServerSettings
    form = ServerSettingsForm
    can_delete = False
    min_num = 1
    max_num = 1

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        superuser = self.is_superuser_session(request)
        fields = SUPERUSER_PROVIDER_FIELDS if superuser else MODERATOR_PROVIDER_FIELDS
        return [*SERVER_SETTINGS_FIELDSETS, (PROVIDER_FIELDSET_TITLE, {"fields": fields})]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if self.is_superuser_session(request) else ["own_endpoint"]

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        if self.is_superuser_session(request):
            kwargs["form"] = SuperuserServerSettingsForm
        return super().get_formset(request, obj, **kwargs)

    @admin.display(description="own endpoint")
    def own_endpoint(self, obj: ServerSettings | None) -> str:
        """Whether a superuser gave the server an endpoint of its own (it wins over the choice above);
        the URL is not shown to moderators."""
        if obj is not None and (obj.llm_base_url or obj.llm_api_key):
            return "set by a platform administrator: used instead of the endpoint above"
        return "none"


class PersonaInline(JSONTextFieldsMixin, ServerScopedAdminMixin, admin.TabularInline):
    model = Persona
    fields = ["persona_nickname", "is_alter", "persona_lineage_id", "trigger_words"]
    readonly_fields = ["persona_lineage_id"]
    show_change_link = True
    extra = 0


class ServerAdmin(SettingsHistoryMixin, ServerScopedAdminMixin, RecordedAdmin):
    """Moderators view and configure their own servers; only superusers add or delete a server
    (a deleted server takes every persona, memory and record of it along).

    Registered by ``community.admin.servers`` (a subclass with each server's usage), not here."""

    Media = ConsoleMedia
    server_field = "pk"
    # Direct-message chats are a filter, not a column: the list fits a 1280 px window.
    list_display = ["name", "server_disc_id", "persona_total", "provider", "created_at"]
    list_select_related = ["settings"]
    list_filter = ["is_dm_channel", "settings__llm_provider", "settings__personal_memories_enabled"]
    search_fields = ["name", "=server_disc_id"]
    readonly_fields = ["moderator_list", "settings_history"]
    inlines = [ServerSettingsInline, PersonaInline]
    # Admin actions offered to superusers only; an app built on personas (the bot's *Test model
    # connection*) registers a subclass naming its own, since personas imports none of them.
    superuser_actions: tuple[Callable[..., Any], ...] = ()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Server]:
        personas = Persona.objects.filter(server=OuterRef("pk")).order_by().values("server")
        total = Subquery(personas.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField())
        return super().get_queryset(request).annotate(persona_total=Coalesce(total, 0))

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.is_superuser_session(request)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        if self.is_superuser_session(request):
            for action in self.superuser_actions:
                actions[action.__name__] = self.get_action(action)
        return actions

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Server:
        server: Server = super().get_object(request, object_id, from_field)
        # Read-only fields are rendered from the object alone: it carries what the reader may do.
        server.moderator_links = partial(self.moderator_links, request, server)  # type: ignore[attr-defined]
        return server

    @admin.display(description="moderators")
    def moderator_list(self, obj: Server) -> str:
        links = getattr(obj, "moderator_links", None)
        return links() if links is not None else "Add moderators once the server is saved."

    def moderator_links(self, request: HttpRequest, obj: Server) -> str:
        """Who moderates this server, and for superusers the one-step form to add someone."""
        names = obj.moderators.order_by("user__username").values_list("user__username", flat=True)
        listed = ", ".join(names) or "none yet (only superusers see this server)"
        if not request.user.is_superuser:
            return listed
        add = reverse("admin:personas_servermoderator_add")
        query = urlencode({"server": obj.pk})
        return format_html('{} <a class="addlink" href="{}?{}">add a moderator</a>', listed, add, query)

    @admin.display(description="personas")
    def persona_total(self, obj: Server) -> int:
        return obj.persona_total  # type: ignore[attr-defined]

    @admin.display(description="model provider", ordering="settings__llm_provider")
    def provider(self, obj: Server) -> str:
        return obj.settings.get_llm_provider_display()


@admin.register(ServerMember)
class ServerMemberAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """Member snapshots come from Discord. Moderators read (and may drop) them but never write one:
    a member row makes that Discord user visible to the server's moderators."""

    list_display = ["user_disc_id", "display_name", "username", "server", "role_names", "is_bot", "presence_status"]
    list_select_related = ["server"]
    list_filter = ["is_bot", "can_manage_server", "presence_status", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user_disc_id", "display_name", "nickname", "global_name", "username"]
    autocomplete_fields = ["server"]
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.is_superuser_session(request)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)

    @admin.display(description="roles")
    def role_names(self, obj: ServerMember) -> str:
        roles = [r for r in obj.roles or [] if isinstance(r, dict)]
        roles.sort(key=lambda r: -int(r.get("position") or 0))
        return ", ".join(str(r.get("name", "")) for r in roles)


@admin.register(ServerEmoji)
class ServerEmojiAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    list_display = ["emoji_name", "emoji_disc_id", "server", "emotion_key", "is_animated", "is_global"]
    list_select_related = ["server"]
    list_filter = ["is_animated", "is_global", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["emoji_name", "=emoji_disc_id", "emotion_key"]
    autocomplete_fields = ["server"]


@admin.register(ServerSticker)
class ServerStickerAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    list_display = ["sticker_name", "sticker_disc_id", "server", "emotion_key", "sticker_format", "is_global"]
    list_select_related = ["server"]
    list_filter = ["is_global", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["sticker_name", "=sticker_disc_id", "emotion_key"]
    autocomplete_fields = ["server"]


@admin.register(MatrixChannelLink)
class MatrixChannelLinkAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """Discord channels bridged to Matrix rooms (data-model.md §2.18). No part of this platform bridges
    Matrix; links a bridge set up are shown and kept. So the section is listed only to readers whose
    servers have links (its pages still answer, e.g. for a superuser adding the first one by URL)."""

    list_display = ["channel_disc_id", "matrix_room_id", "server"]
    list_select_related = ["server"]
    search_fields = ["=channel_disc_id", "matrix_room_id"]
    autocomplete_fields = ["server"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return super().has_module_permission(request) and self.get_queryset(request).exists()
