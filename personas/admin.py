"""Django admin for everything a moderator touches (data-model.md §2).

Changelists cost a constant number of queries per page whatever the table size: every column that
crosses a relation is covered by ``list_select_related`` or a correlated subquery annotation, and
counts that get expensive on a 10,000-memory server are switched off (``show_full_result_count``).
Mutations with rules (memory limits, privacy, blacklist, forget-me) go through ``personas.actions``
so the admin, the API and the bot enforce the same rules.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import AdminSite
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import ValidationError
from django.db.models import Count, Field, IntegerField, Model, OuterRef, QuerySet, Subquery, URLField
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django_celery_beat.models import ClockedSchedule, SolarSchedule

from personas import actions
from personas.access import set_password_link, set_password_link_lifetime
from personas.admin_columns import annotate_servers, server_columns
from personas.admin_fields import JSONTextFieldsMixin
from personas.admin_scoping import (
    KnownUserScopedAdminMixin,
    LineageScopedAdminMixin,
    ServerScopedAdminMixin,
    scoped_like_admin,
)
from personas.models import (
    GLOBAL_LINEAGE_ID,
    ApiToken,
    DiscordUser,
    MatrixChannelLink,
    Persona,
    PersonaAttribute,
    PersonaLineage,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    Server,
    ServerEmoji,
    ServerMember,
    ServerMemory,
    ServerModerator,
    ServerSettings,
    ServerSticker,
    StatCounter,
    UserPersonaNamingPreference,
)

# Beat's solar and clocked schedules: the platform's periodic tasks run on intervals
# (migration personas.0004), and nobody operating it needs sunrise or one-off schedules.
admin.site.unregister(ClockedSchedule)
admin.site.unregister(SolarSchedule)

admin.site.site_header = "Tomori Platform"
admin.site.site_title = "Tomori Platform admin"
admin.site.index_title = "Personas, memories and what each persona is told"

EXCERPT_CHARS = 90
# Typed-in URLs without a scheme are https (Django 6's default, set now to skip the transition warning).
URL_FIELD_OVERRIDES: dict[type[Field[Any, Any]], dict[str, Any]] = {URLField: {"assume_scheme": "https"}}


class ConsoleMedia:
    """The console's stylesheet, for pages with tabular inlines (they must fit the window)."""

    css = {"all": ["personas/console.css"]}


def excerpt(text: str | None) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def lineage_label(lineage_id: int, names: dict[int, str]) -> str:
    if lineage_id == GLOBAL_LINEAGE_ID:
        return "0 · global (every persona)"
    name = names.get(lineage_id)
    return f"{lineage_id} · {name}" if name else str(lineage_id)


def lineage_names(lineage_ids: set[int], request: HttpRequest, site: AdminSite) -> dict[int, str]:
    """Who uses each lineage, for labels: the personas holding it, else its registry label (two queries).

    Only personas and registry rows the reader may see name a lineage: a lineage shared with another
    server's persona must not tell a moderator that server's name.
    """
    holders: dict[int, list[str]] = {}
    personas = scoped_like_admin(site, request, Persona.objects.filter(persona_lineage_id__in=lineage_ids))
    for persona in personas.select_related("server").order_by("persona_lineage_id", "persona_id"):
        holders.setdefault(persona.persona_lineage_id, []).append(f"{persona.persona_nickname} ({persona.server})")
    names = {lid: ", ".join(who) for lid, who in holders.items()}
    missing = lineage_ids - names.keys() - {GLOBAL_LINEAGE_ID}
    registry = scoped_like_admin(site, request, PersonaLineage.objects.filter(id__in=missing))
    for lid, label in registry.values_list("id", "label"):
        names[lid] = f"{label} (no persona)" if label else "no persona"
    return names


class LineageListFilter(admin.SimpleListFilter):
    """Filter rows by the lineage ids present in the table (0 = global), labelled with their personas."""

    title = "lineage"
    parameter_name = "lineage"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        # The rows the reader may see, not the whole table: other servers' lineages stay unnamed.
        rows = model_admin.get_queryset(request).order_by()
        present = set(rows.values_list("persona_lineage_id", flat=True).distinct())
        names = lineage_names(present, request, model_admin.admin_site)
        return [(str(lid), lineage_label(lid, names)) for lid in sorted(present)]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        try:
            return queryset.filter(persona_lineage_id=int(value))
        except ValueError:
            return queryset.none()


def lineage_registry_label() -> Subquery:
    """The registry label of each row's lineage, as one correlated subquery (no query per row)."""
    return Subquery(PersonaLineage.objects.filter(id=OuterRef("persona_lineage_id")).values("label")[:1])


def adopt(target: Model, saved: Model) -> None:
    """Copy a row saved by an action onto the instance the admin form built, so logging and redirects work."""
    for field in target._meta.concrete_fields:
        setattr(target, field.attname, getattr(saved, field.attname))
    target._state.adding = False


class LineageColumnMixin:
    """``lineage`` column: the id and its registry label, read from an annotation."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).annotate(lineage_name=lineage_registry_label())  # type: ignore[misc]

    @admin.display(description="lineage", ordering="persona_lineage_id")
    def lineage(self, obj: Any) -> str:
        if obj.persona_lineage_id == GLOBAL_LINEAGE_ID:
            return "0 · global"
        label = getattr(obj, "lineage_name", "")
        return f"{obj.persona_lineage_id} · {label}" if label else str(obj.persona_lineage_id)


# --- servers ---------------------------------------------------------------------------------


SERVER_SETTINGS_FIELDSETS: list[Any] = [
    (None, {"fields": ["message_fetch_limit", "timezone_offset", "humanizer_degree", "retention_days"]}),
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
                "user_blocking_enabled",
                "deliberate_trigger_mode",
                "always_reply_enabled",
                "voice_transcript_chat_mode",
                "uncensor_injection_enabled",
                "uncensor_unicode_space_enabled",
            ]
        },
    ),
    ("Channels", {"fields": ["rp_channel_ids", "private_channel_ids"]}),
]
PROVIDER_FIELDSET_TITLE = "Model provider (empty = platform default from the environment)"
# Moderators choose the kind and, among the endpoints the operator approved, where the prompt goes.
# Only superusers name an endpoint of the server's own and give it a key: a moderator who could set a
# URL would have the operator's key (or the prompt of every member) sent wherever they like.
MODERATOR_PROVIDER_FIELDS = ["llm_provider", "llm_endpoint", "own_endpoint"]
SUPERUSER_PROVIDER_FIELDS = [
    "llm_provider",
    "llm_endpoint",
    "llm_base_url",
    "llm_model",
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


@admin.register(Server)
class ServerAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """Moderators view and configure their own servers; only superusers add or delete a server
    (a deleted server takes every persona, memory and record of it along)."""

    Media = ConsoleMedia
    server_field = "pk"
    list_display = ["name", "server_disc_id", "is_dm_channel", "persona_total", "provider", "created_at"]
    list_select_related = ["settings"]
    list_filter = ["is_dm_channel", "settings__llm_provider", "settings__personal_memories_enabled"]
    search_fields = ["name", "=server_disc_id"]
    readonly_fields = ["moderator_list"]
    inlines = [ServerSettingsInline, PersonaInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Server]:
        personas = Persona.objects.filter(server=OuterRef("pk")).order_by().values("server")
        total = Subquery(personas.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField())
        return annotate_servers(super().get_queryset(request).annotate(persona_total=Coalesce(total, 0)))

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        # Other apps' figures (personas.admin_columns) sit with the persona count, in view without scrolling.
        shown = list(super().get_list_display(request))
        at = shown.index("persona_total") + 1
        return [*shown[:at], *server_columns(), *shown[at:]]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.is_superuser_session(request)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)

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


# --- personas --------------------------------------------------------------------------------


class PersonaAttributeInline(ServerScopedAdminMixin, admin.TabularInline):
    model = PersonaAttribute
    server_field = "persona__server"
    fields = ["attribute_order", "attribute_text", "is_public"]
    ordering = ["attribute_order"]
    extra = 1


@admin.register(Persona)
class PersonaAdmin(JSONTextFieldsMixin, ServerScopedAdminMixin, admin.ModelAdmin):
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
                "fields": [
                    "humanizer_degree",
                    "self_debug_enabled",
                    "webhook_avatar_url",
                    "is_pointer",
                    "preset_lineage_id",
                    "preset_language",
                ],
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


# --- users and memories ----------------------------------------------------------------------


ONE_LINE = forms.TextInput(attrs={"size": 40})
SHORT_TEXT = forms.Textarea(attrs={"rows": 2, "cols": 60})


class UntouchedNullsForm(forms.ModelForm):
    """For nullable text columns where NULL and '' differ (a prefix override of '' deliberately
    suppresses the persona's prefix; NULL follows it, H-09): an emptied input stores NULL, and an
    input the moderator did not touch keeps what is stored, so saving a page never turns NULL
    into '' (or back)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.nullable_text = [
            name
            for name, field in self.fields.items()
            if isinstance(field, forms.CharField) and getattr(self._meta.model._meta.get_field(name), "null", False)
        ]
        for name in self.nullable_text:
            self.fields[name].empty_value = None  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name in self.nullable_text:
            if name in data and name not in self.changed_data:
                data[name] = self.initial.get(name)
        return data


class DiscordUserForm(UntouchedNullsForm):
    class Meta:
        model = DiscordUser
        # The fields this form shapes; the admin's fieldsets give the page's full list.
        fields = ["user_nickname", "prefix_override", "suffix_override", "gender_identity", "pronouns"]
        widgets = {name: ONE_LINE for name in fields} | {"nai_char_ref_url": forms.TextInput(attrs={"size": 60})}


class NamingPreferenceForm(UntouchedNullsForm):
    class Meta:
        model = UserPersonaNamingPreference
        fields = ["user", "persona_lineage_id", "nickname_override", "prefix_override", "suffix_override"]
        widgets = {name: ONE_LINE for name in ("nickname_override", "prefix_override", "suffix_override")}


class PersonalMemoryInlineForm(forms.ModelForm):
    class Meta:
        model = PersonalMemory
        fields = ["persona_lineage_id", "content", "tags"]
        widgets = {"content": SHORT_TEXT}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A memory's lineage never changes: moving it is forgetting in one persona and teaching another.
        self.fields["persona_lineage_id"].disabled = True


class PersonalMemoryInline(JSONTextFieldsMixin, LineageScopedAdminMixin, admin.TabularInline):
    """The user's memories, newest first; new ones are added on the memory page where limits are checked.
    A moderator sees (and edits) only the memories of their servers' lineages."""

    model = PersonalMemory
    form = PersonalMemoryInlineForm
    fields = ["persona_lineage_id", "content", "tags", "created_at"]
    readonly_fields = ["created_at"]
    ordering = ["-created_at", "-personal_memory_id"]
    show_change_link = True
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class NamingPreferenceInline(LineageScopedAdminMixin, admin.TabularInline):
    model = UserPersonaNamingPreference
    form = NamingPreferenceForm
    fields = ["persona_lineage_id", "nickname_override", "prefix_override", "suffix_override"]
    extra = 0


def _privacy_action(level: PrivacyLevel) -> Any:
    def set_level(modeladmin: DiscordUserAdmin, request: HttpRequest, queryset: QuerySet[DiscordUser]) -> None:
        changed = 0
        for user in queryset:
            actions.set_privacy_level(user, level)
            changed += 1
        modeladmin.message_user(request, f"Privacy level set to {level.label} for {changed} user(s).")

    set_level.__name__ = f"set_privacy_{level.name.lower()}"
    return admin.action(description=f"Set privacy level: {level.label}", permissions=["change"])(set_level)


@admin.register(DiscordUser)
class DiscordUserAdmin(JSONTextFieldsMixin, KnownUserScopedAdminMixin, admin.ModelAdmin):
    """Discord users and their personalization. A moderator sees the users their servers know, and of
    each user only the memories and naming preferences of their servers' lineages. Users are created
    by the bot; deleting one is for superusers (it would take every server's memories along), while
    moderators use "forget" — the user's right to erasure, which is not limited to one server."""

    Media = ConsoleMedia
    form = DiscordUserForm
    list_display = ["user_disc_id", "username", "global_name", "user_nickname", "privacy_level", "memory_total"]
    list_filter = ["privacy_level", "addressing_style"]
    search_fields = ["=user_disc_id", "username", "global_name", "user_nickname"]
    show_full_result_count = False
    readonly_fields = ["memories_by_lineage", "created_at", "updated_at"]
    inlines = [PersonalMemoryInline, NamingPreferenceInline]
    actions = [
        "forget_users",
        _privacy_action(PrivacyLevel.MINIMAL),
        _privacy_action(PrivacyLevel.PARTIAL),
        _privacy_action(PrivacyLevel.FULL),
    ]
    fieldsets = [
        (None, {"fields": ["user_disc_id", "username", "global_name", "privacy_level", "memories_by_lineage"]}),
        (
            "Personalization",
            {
                "fields": [
                    "user_nickname",
                    "prefix_override",
                    "suffix_override",
                    "addressing_style",
                    "gender_identity",
                    "pronouns",
                    "timezone_offset",
                    "physical_appearance_tags",
                    "language_pref",
                ]
            },
        ),
        (
            "Advanced",
            {
                "fields": [
                    "registration_locale",
                    "nai_char_ref_url",
                    "impersonation_prompt",
                    "personal_dtm",
                    "personal_deliberate_tool_mode",
                    "shortterm_cache_crossserver_opt_in",
                    "created_at",
                    "updated_at",
                ],
                "classes": ["collapse"],
            },
        ),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[DiscordUser]:
        # Counts only the memories the reader may see, like the memory page.
        visible = scoped_like_admin(self.admin_site, request, PersonalMemory.objects.filter(user=OuterRef("pk")))
        memories = visible.order_by().values("user")
        total = Subquery(memories.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField())
        return super().get_queryset(request).annotate(memory_total=Coalesce(total, 0))

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> DiscordUser:
        user: DiscordUser = super().get_object(request, object_id, from_field)
        # Read-only fields are rendered from the object alone: it carries the reader's memory links.
        user.memory_links = partial(self.memory_links, request, user)  # type: ignore[attr-defined]
        return user

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.is_superuser_session(request)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)

    def has_forget_permission(self, request: HttpRequest) -> bool:
        return self.moderates_any(request)

    @admin.display(description="memories")
    def memory_total(self, obj: DiscordUser) -> int:
        return obj.memory_total  # type: ignore[attr-defined]

    @admin.display(description="memories by lineage")
    def memories_by_lineage(self, obj: DiscordUser) -> str:
        links = getattr(obj, "memory_links", None)
        return links() if links is not None else "–"

    def memory_links(self, request: HttpRequest, obj: DiscordUser) -> str:
        """Links to the user's memories per lineage the reader may see, and to add one."""
        memories = scoped_like_admin(self.admin_site, request, PersonalMemory.objects.filter(user=obj))
        counts = dict(
            memories.order_by()
            .values_list("persona_lineage_id")
            .annotate(n=Count("pk"))
            .values_list("persona_lineage_id", "n")
        )
        names = lineage_names(set(counts), request, self.admin_site)
        changelist = reverse("admin:personas_personalmemory_changelist")
        add = reverse("admin:personas_personalmemory_add")
        links = format_html_join(
            ", ",
            '<a href="{}?{}">{}: {}</a>',
            (
                (changelist, urlencode({"user__user_id__exact": obj.pk, "lineage": lid}), lineage_label(lid, names), n)
                for lid, n in sorted(counts.items())
            ),
        )
        return format_html(
            '{} <a class="addlink" href="{}?{}">add a memory</a>',
            links or "none",
            add,
            urlencode({"user": obj.pk}),
        )

    def save_model(self, request: HttpRequest, obj: DiscordUser, form: forms.ModelForm, change: bool) -> None:
        new_level = obj.privacy_level
        if change and "privacy_level" in form.changed_data:
            # The privacy change goes through the action (and whatever it invalidates); the rest saves here.
            obj.privacy_level = form.initial["privacy_level"]
            super().save_model(request, obj, form, change)
            actions.set_privacy_level(obj, new_level)
        else:
            super().save_model(request, obj, form, change)

    def save_formset(self, request: HttpRequest, form: forms.ModelForm, formset: Any, change: bool) -> None:
        if formset.model is not PersonalMemory:
            super().save_formset(request, form, formset, change)
            return
        for memory in formset.save(commit=False):
            actions.update_personal_memory(memory, content=memory.content, tags=memory.tags)
        for memory in formset.deleted_objects:
            actions.delete_personal_memory(memory)

    @admin.action(
        description="Forget selected users (delete their memories, reminders and prompt records)",
        permissions=["forget"],
    )
    def forget_users(self, request: HttpRequest, queryset: QuerySet[DiscordUser]) -> HttpResponse | None:
        if request.POST.get("confirm") != "yes":
            # Forget-me is not limited to the reader's servers, so neither is the count of what goes.
            users = [(user, actions.records_about(user.user_disc_id).count()) for user in queryset]
            context = {
                **self.admin_site.each_context(request),
                "title": "Forget these users?",
                "users": users,
                "records_total": sum(n for _, n in users),
                "opts": self.model._meta,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
                "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
            }
            return TemplateResponse(request, "admin/personas/discorduser/forget_confirmation.html", context)
        totals: dict[str, int] = {}
        for user in queryset:
            result = actions.forget_user(user.user_disc_id)
            for key, value in result.as_dict().items():
                if not isinstance(value, bool):
                    totals[key] = totals.get(key, 0) + value
        # The prompt records are always counted: "0 prompt records" is what a moderator checks for.
        summary = ", ".join(f"{n} {key.replace('_', ' ')}" for key, n in totals.items() if n or key == "prompt_records")
        self.message_user(request, f"Forgot {queryset.count()} user(s): {summary or 'nothing was stored'}.")
        return None


def refusal(exc: actions.ActionError) -> ValidationError:
    """An action's refusal as a form error, next to the field it is about when it names one."""
    return ValidationError({exc.field: str(exc)} if exc.field else str(exc))


class NewMemoryForm(forms.ModelForm):
    """A memory form whose add is checked by the action that will store it, so the form refuses
    exactly what the action would (and shows why next to the field); edits are checked on save."""

    def check_new(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.instance.pk is None and not self.errors:
            try:
                self.check_new(data)
            except actions.ActionError as exc:
                raise refusal(exc) from exc
        return data


class PersonalMemoryForm(NewMemoryForm):
    class Meta:
        model = PersonalMemory
        fields = ["user", "persona_lineage_id", "content", "tags"]

    def check_new(self, data: dict[str, Any]) -> None:
        actions.check_new_personal_memory(data["user"], data["persona_lineage_id"], data["content"])


@admin.register(PersonalMemory)
class PersonalMemoryAdmin(JSONTextFieldsMixin, LineageScopedAdminMixin, LineageColumnMixin, admin.ModelAdmin):
    """Personal memories. A moderator sees, adds and edits those of their servers' lineages only, for the
    users their servers know; global (lineage 0) memories are superusers' alone (``moderated_lineages``)."""

    form = PersonalMemoryForm
    list_display = ["personal_memory_id", "memory", "user", "lineage", "tag_list", "created_at"]
    list_display_links = ["personal_memory_id", "memory"]
    list_select_related = ["user"]
    list_filter = [LineageListFilter, "user__privacy_level"]
    search_fields = ["content", "=user__user_disc_id", "user__username", "user__global_name"]
    # Not a raw id widget: it would print the name of any user id typed into the URL.
    autocomplete_fields = ["user"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    list_per_page = 50

    def get_readonly_fields(self, request: HttpRequest, obj: PersonalMemory | None = None) -> list[str]:
        return ["user", "persona_lineage_id", "created_at", "updated_at"] if obj is not None else []

    @admin.display(description="memory")
    def memory(self, obj: PersonalMemory) -> str:
        return excerpt(obj.content)

    @admin.display(description="tags")
    def tag_list(self, obj: PersonalMemory) -> str:
        return ", ".join(str(t) for t in obj.tags or [])

    def save_model(self, request: HttpRequest, obj: PersonalMemory, form: forms.ModelForm, change: bool) -> None:
        if change:
            actions.update_personal_memory(obj, content=obj.content, tags=obj.tags)
        else:
            adopt(obj, actions.add_personal_memory(obj.user, obj.persona_lineage_id, obj.content, obj.tags))

    def delete_model(self, request: HttpRequest, obj: PersonalMemory) -> None:
        actions.delete_personal_memory(obj)


@admin.register(UserPersonaNamingPreference)
class NamingPreferenceAdmin(LineageScopedAdminMixin, admin.ModelAdmin):
    form = NamingPreferenceForm
    list_display = ["user", "persona_lineage_id", "nickname_override", "prefix_override", "suffix_override"]
    list_select_related = ["user"]
    list_filter = [LineageListFilter]
    search_fields = ["=user__user_disc_id", "user__username", "nickname_override"]
    autocomplete_fields = ["user"]
    show_full_result_count = False

    def get_readonly_fields(self, request: HttpRequest, obj: UserPersonaNamingPreference | None = None) -> list[str]:
        # A preference belongs to its user: an owner outside the reader's users must not be blanked on save.
        return ["user"] if obj is not None else []


class ServerMemoryForm(NewMemoryForm):
    class Meta:
        model = ServerMemory
        fields = ["server", "persona", "persona_lineage_id", "user", "content", "tags"]

    def check_new(self, data: dict[str, Any]) -> None:
        actions.check_new_server_memory(data["server"], data["persona_lineage_id"], data["content"])


@admin.register(ServerMemory)
class ServerMemoryAdmin(JSONTextFieldsMixin, ServerScopedAdminMixin, LineageColumnMixin, admin.ModelAdmin):
    """Server memories, written through ``personas.actions`` (lineage, length and per-lineage limit);
    a memory's server and lineage never change once stored."""

    form = ServerMemoryForm
    list_display = ["id", "memory", "server", "lineage", "persona", "user", "created_at"]
    list_display_links = ["id", "memory"]
    list_select_related = ["server", "persona", "user"]
    list_filter = [LineageListFilter, ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["content", "=server__server_disc_id"]
    autocomplete_fields = ["server", "persona", "user"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    list_per_page = 50

    def get_readonly_fields(self, request: HttpRequest, obj: ServerMemory | None = None) -> list[str]:
        # Who taught and learned it is history (a field limited to the reader's users would blank an
        # author it cannot list); moving it to another lineage is forgetting and teaching anew.
        return ["server", "persona", "persona_lineage_id", "user"] if obj is not None else []

    @admin.display(description="memory")
    def memory(self, obj: ServerMemory) -> str:
        return excerpt(obj.content)

    def save_model(self, request: HttpRequest, obj: ServerMemory, form: forms.ModelForm, change: bool) -> None:
        if change:
            actions.update_server_memory(obj, content=obj.content, tags=obj.tags)
        else:
            saved = actions.add_server_memory(
                obj.server, obj.persona_lineage_id, obj.content, obj.tags, persona=obj.persona, user=obj.user
            )
            adopt(obj, saved)


@admin.register(StatCounter)
class StatCounterAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """Read-only activity counters (D-16 ``has_server_activity``)."""

    list_display = ["metric", "metric_key", "bucket", "count", "user", "server", "persona_lineage_id"]
    list_select_related = ["user", "server"]
    list_filter = ["metric", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user__user_disc_id"]
    date_hierarchy = "bucket"
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


# --- reminders -------------------------------------------------------------------------------


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


class PersonaOfServerForm(forms.ModelForm):
    """Rows that name both a server and a persona must name a persona of that server."""

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        server, persona = data.get("server"), data.get("persona")
        if server is not None and persona is not None and persona.server_id != server.pk:
            raise ValidationError({"persona": f"{persona} is not a persona of {server}."})
        return data


@admin.register(Reminder)
class ReminderAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
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
    # Delivery state is the dispatcher's (personas.reminders_service): shown, never edited by hand.
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
        ("Delivery", {"fields": delivery_fields}),
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
                actions.cancel_reminder(reminder)
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
            actions.retry_reminder(reminder)
            retried += 1
        self.message_user(request, f"{retried} failed reminder(s) will be delivered again.")


# --- moderation ------------------------------------------------------------------------------


@admin.register(PersonalizationBlacklist)
class PersonalizationBlacklistAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    list_display = ["user_disc_id", "known_as", "server", "reason", "created_at"]
    list_select_related = ["server"]
    list_filter = [("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user_disc_id", "reason"]
    autocomplete_fields = ["server"]
    show_full_result_count = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[PersonalizationBlacklist]:
        # Keyed by snowflake, not FK (data-model.md §4.7): the name comes from a subquery, not a join.
        names = DiscordUser.objects.filter(user_disc_id=OuterRef("user_disc_id"))
        return super().get_queryset(request).annotate(known_name=Subquery(names.values("username")[:1]))

    @admin.display(description="username")
    def known_as(self, obj: PersonalizationBlacklist) -> str:
        return obj.known_name or "–"  # type: ignore[attr-defined]

    def get_readonly_fields(self, request: HttpRequest, obj: PersonalizationBlacklist | None = None) -> list[str]:
        return ["server", "user_disc_id", "created_at"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: PersonalizationBlacklist, form: forms.ModelForm, change: bool
    ) -> None:
        adopt(obj, actions.add_to_blacklist(obj.server, obj.user_disc_id, obj.reason))

    def delete_model(self, request: HttpRequest, obj: PersonalizationBlacklist) -> None:
        actions.remove_from_blacklist(obj.server, obj.user_disc_id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[PersonalizationBlacklist]) -> None:
        for entry in queryset.select_related("server"):
            actions.remove_from_blacklist(entry.server, entry.user_disc_id)


class ActiveBlockFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("active", "Active"), ("expired", "Expired")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "active":
            return queryset.filter(expires_at__gt=timezone.now())
        if self.value() == "expired":
            return queryset.filter(expires_at__lte=timezone.now())
        return queryset


@admin.register(PersonaUserBlock)
class PersonaUserBlockAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    form = PersonaOfServerForm
    list_display = ["user_disc_id", "persona", "server", "block_type", "expires_at", "is_active", "reason"]
    list_select_related = ["server", "persona"]
    list_filter = [ActiveBlockFilter, "block_type", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user_disc_id", "reason", "persona__persona_nickname"]
    autocomplete_fields = ["server", "persona"]
    date_hierarchy = "expires_at"
    show_full_result_count = False

    @admin.display(description="active", boolean=True)
    def is_active(self, obj: PersonaUserBlock) -> bool:
        return obj.expires_at > timezone.now()


# --- access: moderators and API tokens ---------------------------------------------------------


class ServerModeratorForm(forms.ModelForm):
    def clean_user(self) -> Any:
        user = self.cleaned_data["user"]
        if not user.is_staff:
            raise ValidationError("Only staff accounts can sign in to the admin; mark the account as staff first.")
        return user


class AddModeratorForm(forms.ModelForm):
    """Adding a moderator is one step (issue 16): a username, new or existing, and a server."""

    username = forms.CharField(
        max_length=150,
        help_text=(
            "The account they sign in with. When there is none by this name it is created, and you get a "
            "link to send them where they choose their password. Staff status is given; no other permission."
        ),
    )

    class Meta:
        model = ServerModerator
        fields = ["username", "server"]

    def clean_username(self) -> str:
        try:
            return actions.check_moderator_username(self.cleaned_data["username"])
        except actions.ActionError as exc:
            raise ValidationError(str(exc)) from exc


@admin.register(ServerModerator)
class ServerModeratorAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """Who moderates which server (issue 5). Moderators see the rows of their own servers; only
    superusers grant or withdraw moderation, so nobody widens their own reach. Adding one takes a
    username and a server (``actions.add_moderator``: the account is created and made staff as needed)."""

    form = ServerModeratorForm
    list_display = ["user", "server", "created_at"]
    list_select_related = ["user", "server"]
    list_filter = [("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["user__username", "server__name", "=server__server_disc_id"]
    autocomplete_fields = ["server", "user"]
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)

    def get_form(self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = AddModeratorForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request: HttpRequest, obj: ServerModerator, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        grant = actions.add_moderator(form.cleaned_data["username"], obj.server)
        adopt(obj, grant.moderator)
        name = grant.account.get_username()
        obj.already_moderated = not grant.added  # type: ignore[attr-defined]
        if not grant.added:
            self.message_user(request, f"Nothing changed: {name} already moderated {obj.server}.", messages.INFO)
        elif grant.created_account:
            self.message_user(request, f"Created the staff account {name}.")
        elif grant.made_staff:
            self.message_user(request, f"Gave {name} staff status so they can sign in.")
        if grant.needs_password:
            self.message_user(
                request,
                format_html(
                    "No password yet for {}: send them this link to choose one. It works once, for {} "
                    "(adding them again makes a new one): <code>{}</code>",
                    name,
                    set_password_link_lifetime(),
                    set_password_link(grant.account),
                ),
                messages.WARNING,
            )

    def response_add(self, request: HttpRequest, obj: ServerModerator, post_url_continue: str | None = None) -> Any:
        if getattr(obj, "already_moderated", False):  # not "added successfully": it was there already
            return HttpResponseRedirect(reverse("admin:personas_servermoderator_changelist"))
        return super().response_add(request, obj, post_url_continue)


class TokenStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("active", "Active"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


TOKEN_DETAIL_FIELDS = ["token_prefix", "token_hash", "created_by", "created_at", "last_used_at", "revoked_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """Per-server API tokens for dashboards (issue 5). Only the SHA-256 hash is stored: the raw
    token is shown once, in the message after it is created, and cannot be shown again. A token is
    revoked rather than deleted, so its prefix and last use stay on record."""

    list_display = ["name", "server", "scope", "token_prefix", "is_active", "created_by", "created_at", "last_used_at"]
    list_select_related = ["server", "created_by"]
    list_filter = [TokenStateFilter, "scope", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "=token_prefix"]
    show_full_result_count = False
    actions = ["revoke_tokens"]

    def get_fields(self, request: HttpRequest, obj: Model | None = None) -> list[Any]:
        return ["server", "name", "scope"] if obj is None else ["server", "name", "scope", *TOKEN_DETAIL_FIELDS]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        # Once issued, a token keeps its server and scope: a different reach is a new token.
        return [] if obj is None else ["server", "scope", *TOKEN_DETAIL_FIELDS]

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)

    @admin.display(description="active", boolean=True, ordering="revoked_at")
    def is_active(self, obj: ApiToken) -> bool:
        return obj.is_active

    def save_model(self, request: HttpRequest, obj: ApiToken, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = ApiToken.issue(obj.server, obj.name, obj.scope, created_by=request.user)
        adopt(obj, token)
        self.message_user(
            request,
            format_html("Copy this token now; it is shown only once and cannot be recovered: <code>{}</code>", raw),
            messages.WARNING,
        )

    @admin.action(description="Revoke selected tokens", permissions=["change"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {revoked} token(s).")
