"""Admin for Discord users, their naming preferences and activity counters."""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import Count, IntegerField, Model, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode

from personas import actions
from personas.admin.blacklisting import blacklist_step
from personas.admin.common import (
    ConsoleMedia,
    LineageColumnMixin,
    LineageListFilter,
    adopt,
    lineage_label,
    lineage_names,
)
from personas.admin.fields import JSONTextFieldsMixin
from personas.admin.history import AuditedAdmin, RecordedAdmin, admin_actor
from personas.admin.memories import PersonalMemoryInline
from personas.admin.navigation import back_or, return_url, users_named, with_next
from personas.admin.scoping import (
    KnownUserScopedAdminMixin,
    LineageScopedAdminMixin,
    ServerScopedAdminMixin,
    scoped_like_admin,
)
from personas.models import (
    DiscordUser,
    PersonalMemory,
    PrivacyLevel,
    StatCounter,
    UserPersonaNamingPreference,
)

ONE_LINE = forms.TextInput(attrs={"size": 40})
# Forget-me's and the blacklist's confirmation: one page of the users list at most.
MAX_CONFIRMED_USERS = 100


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
        super().clean()
        data = self.cleaned_data
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


class NamingPreferenceInline(LineageScopedAdminMixin, admin.TabularInline):
    model = UserPersonaNamingPreference
    form = NamingPreferenceForm
    fields = ["persona_lineage_id", "nickname_override", "prefix_override", "suffix_override"]
    extra = 0


def save_naming_preference(
    preference: UserPersonaNamingPreference, actor: actions.Actor
) -> UserPersonaNamingPreference:
    """A preference a form built, stored through its action."""
    return actions.set_naming_preference(
        preference.user,
        preference.persona_lineage_id,
        nickname_override=preference.nickname_override,
        prefix_override=preference.prefix_override,
        suffix_override=preference.suffix_override,
        actor=actor,
    )


def _privacy_action(level: PrivacyLevel) -> Any:
    def set_level(
        modeladmin: DiscordUserAdmin, request: HttpRequest, queryset: QuerySet[DiscordUser]
    ) -> HttpResponse | None:
        users = list(queryset)
        for user in users:
            actions.set_privacy_level(user, level, actor=admin_actor(request))
        modeladmin.message_user(request, f"Privacy level set to {level.label} for {users_named(users)}.")
        return back_or(request, None)

    set_level.__name__ = f"set_privacy_{level.name.lower()}"
    return admin.action(description=f"Set privacy level: {level.label}", permissions=["change"])(set_level)


class DiscordUserAdmin(JSONTextFieldsMixin, KnownUserScopedAdminMixin, AuditedAdmin):
    """Discord users and their personalization. A moderator sees the users their servers know, and of
    each user only the memories and naming preferences of their servers' lineages. Users are created
    by the bot; deleting one is for superusers (it would take every server's memories along), while
    moderators use "forget" — the user's right to erasure, which is not limited to one server.

    Forget-me and the user view reach prompt records, so ``community.admin.users`` adds them in a
    subclass and registers that; this class is registered nowhere."""

    Media = ConsoleMedia
    form = DiscordUserForm
    list_display = ["user_disc_id", "username", "global_name", "user_nickname", "privacy_level", "memory_total"]
    list_filter = ["privacy_level", "addressing_style"]
    search_fields = ["=user_disc_id", "username", "global_name", "user_nickname"]
    show_full_result_count = False
    # The impersonation consent is the member's own (/privacy impersonation): shown, never set here.
    readonly_fields = [
        "what_they_know",
        "blacklisting",
        "memories_by_lineage",
        "allow_impersonation",
        "created_at",
        "updated_at",
    ]
    inlines = [PersonalMemoryInline, NamingPreferenceInline]
    actions = [
        "blacklist_users",
        _privacy_action(PrivacyLevel.MINIMAL),
        _privacy_action(PrivacyLevel.PARTIAL),
        _privacy_action(PrivacyLevel.FULL),
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "user_disc_id",
                    "username",
                    "global_name",
                    "what_they_know",
                    "privacy_level",
                    "blacklisting",
                    "memories_by_lineage",
                ]
            },
        ),
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
                    "allow_impersonation",
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

    def get_readonly_fields(self, request: HttpRequest, obj: DiscordUser | None = None) -> list[str]:
        # The account's id and names come from Discord (refreshed on contact); a page edits the rest.
        discord = ["user_disc_id", "username", "global_name"] if obj is not None else []
        return [*discord, *self.readonly_fields]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.is_superuser_session(request)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.is_superuser_session(request)

    def has_blacklist_permission(self, request: HttpRequest) -> bool:
        return self.moderates_any(request)

    @admin.display(description="memories")
    def memory_total(self, obj: DiscordUser) -> int:
        return obj.memory_total  # type: ignore[attr-defined]

    @admin.display(description="what the personas know")
    def what_they_know(self, obj: DiscordUser) -> str:
        if obj.pk is None:
            return "–"
        url = reverse("admin:personas_discorduser_known", args=[obj.pk], current_app=self.admin_site.name)
        return format_html(
            '<a id="what-they-know" href="{}">Memories (global ones too), reminders, blocks, blacklist, privacy and '
            "prompt records, on your servers</a>",
            url,
        )

    @admin.display(description="personalization blacklist")
    def blacklisting(self, obj: DiscordUser) -> str:
        if obj.pk is None:
            return "–"
        site = self.admin_site.name
        here = reverse("admin:personas_discorduser_change", args=[obj.pk], current_app=site)
        url = reverse("admin:personas_discorduser_blacklist", args=[obj.pk], current_app=site)
        return format_html(
            '<a id="blacklist-link" href="{}">Add to or take off a server\'s personalization blacklist</a>',
            with_next(url, here),
        )

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
                (
                    changelist,
                    urlencode({"user__user_id__exact": obj.pk, "lineage": lid}),
                    lineage_label(lid, names.get(lid)),
                    n,
                )
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
        if not change:  # a superuser adding a row by hand (the bot registers users)
            actions.add_user(obj, actor=admin_actor(request))
            return
        actor = admin_actor(request)
        profile = {name: getattr(obj, name) for name in form.changed_data if name in actions.EDITABLE_USER_FIELDS}
        new_level = obj.privacy_level
        # Each change goes through its action; unchanged columns are saved by neither.
        obj.refresh_from_db()
        actions.update_profile(obj, profile, actor=actor)
        if "privacy_level" in form.changed_data:
            actions.set_privacy_level(obj, new_level, actor=actor)

    def delete_model(self, request: HttpRequest, obj: DiscordUser) -> None:
        actions.delete_user(obj, actor=admin_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[DiscordUser]) -> None:
        for user in queryset:
            actions.delete_user(user, actor=admin_actor(request))

    def save_formset(self, request: HttpRequest, form: forms.ModelForm, formset: Any, change: bool) -> None:
        actor = admin_actor(request)
        if formset.model is PersonalMemory:
            for memory in formset.save(commit=False):
                actions.update_personal_memory(memory, content=memory.content, tags=memory.tags, actor=actor)
            for memory in formset.deleted_objects:
                actions.delete_personal_memory(memory, actor=actor)
            return
        for preference in formset.save(commit=False):
            save_naming_preference(preference, actor)
        for preference in formset.deleted_objects:
            actions.delete_naming_preference(preference, actor=actor)

    def confirmable(self, request: HttpRequest, queryset: QuerySet[DiscordUser], what: str) -> list[DiscordUser] | None:
        """The users an action with a confirmation page acts on, or None (with a message) when refused.

        The confirmation lists (and forget-me previews, holding write locks) each user and re-posts their
        ids, so "Select all" matching users, which posts only the page's ids, and more users than a page
        holds are refused rather than previewed for ones the confirmation would not act on.
        """
        if request.POST.get("select_across") == "1":
            self.message_user(
                request,
                f"{what} acts on the users ticked on this page, not on every user the list matches: tick them.",
                messages.WARNING,
            )
            return None
        users = list(queryset[: MAX_CONFIRMED_USERS + 1])
        if len(users) > MAX_CONFIRMED_USERS:
            self.message_user(
                request, f"{what} takes at most {MAX_CONFIRMED_USERS} users at once: tick fewer.", messages.WARNING
            )
            return None
        return users

    @admin.action(description="Add to or take off a server's personalization blacklist…", permissions=["blacklist"])
    def blacklist_users(self, request: HttpRequest, queryset: QuerySet[DiscordUser]) -> HttpResponse | None:
        users = self.confirmable(request, queryset, "The blacklist")
        if users is None:
            return None
        selected = [(ACTION_CHECKBOX_NAME, pk) for pk in request.POST.getlist(ACTION_CHECKBOX_NAME)]
        back = return_url(request)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Personalization blacklist: {users_named(users)}",
            "opts": self.model._meta,
            "post_to": "",
            "hidden": [("action", "blacklist_users"), *selected, *([("next", back)] if back else [])],
            "back": back or reverse("admin:personas_discorduser_changelist", current_app=self.admin_site.name),
        }
        return blacklist_step(request, users, context, back_or(request, None))


@admin.register(UserPersonaNamingPreference)
class NamingPreferenceAdmin(LineageScopedAdminMixin, LineageColumnMixin, RecordedAdmin):
    form = NamingPreferenceForm
    list_display = ["user", "lineage", "nickname_override", "prefix_override", "suffix_override"]
    list_select_related = ["user"]
    list_filter = [LineageListFilter]
    search_fields = ["=user__user_disc_id", "user__username", "nickname_override"]
    autocomplete_fields = ["user"]
    show_full_result_count = False

    def get_readonly_fields(self, request: HttpRequest, obj: UserPersonaNamingPreference | None = None) -> list[str]:
        # A preference belongs to its user: an owner outside the reader's users must not be blanked on save.
        return ["user"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: UserPersonaNamingPreference, form: forms.ModelForm, change: bool
    ) -> None:
        adopt(obj, save_naming_preference(obj, admin_actor(request)))

    def delete_model(self, request: HttpRequest, obj: UserPersonaNamingPreference) -> None:
        actions.delete_naming_preference(obj, actor=admin_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[UserPersonaNamingPreference]) -> None:
        for preference in queryset:
            actions.delete_naming_preference(preference, actor=admin_actor(request))


@admin.register(StatCounter)
class StatCounterAdmin(ServerScopedAdminMixin, LineageColumnMixin, admin.ModelAdmin):
    """Read-only activity counters (D-16 ``has_server_activity``)."""

    list_display = ["metric", "metric_key", "bucket", "count", "user", "server", "lineage"]
    list_select_related = ["user", "server"]
    list_filter = ["metric", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user__user_disc_id"]
    date_hierarchy = "bucket"
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
