"""Cards in the console: *Personas → Import card* (upload, preview, save) and *Download card* on a
persona's page; lorebooks with their entries under *Lorebooks*.

The persona admin is ``personas``' own, extended here (this app sits above ``personas`` in the import
layers, so it registers the subclass in place of the original). An upload waits in
``VAR_DIR/card-uploads`` between its preview and its saving, named by a signed token bound to the
account, and is deleted when saved or refused; a preview never writes a row.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from characters.downloads import card_download
from characters.errors import CardError
from characters.files import MAX_CARD_BYTES, read_card
from personas.actions import ActionError, Actor
from personas.actions.cards import import_card
from personas.admin.history import AuditedAdmin
from personas.admin.personas import PersonaAdmin
from personas.admin.scoping import ServerScopedAdminMixin, scoped_like_admin
from personas.character_data import CardData
from personas.models import Lorebook, LorebookEntry, Persona, Server

UPLOADS = "card-uploads"
_SALT = "characters.admin.upload"
_UPLOAD_HOURS = 1


class CardUploadForm(forms.Form):
    server = forms.ModelChoiceField(queryset=Server.objects.none(), help_text="The server the character joins.")
    file = forms.FileField(
        label="Card", help_text="A SillyTavern card: .png (ccv3 or chara chunk), .json or .charx; at most 20 MB."
    )
    alter = forms.BooleanField(
        label="As an alter",
        required=False,
        initial=True,
        help_text="Off: the server's main persona takes the character (its traits, card, own lorebooks and "
        "lineage are replaced: the new character does not remember what the old one was told).",
    )

    def clean_file(self) -> bytes:
        upload = self.cleaned_data["file"]
        if upload.size > MAX_CARD_BYTES:
            raise forms.ValidationError(f"The file has more than {MAX_CARD_BYTES // 1024 // 1024} MB.")
        data: bytes = upload.read()
        try:
            self.card: CardData = read_card(data)
        except CardError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


def _uploads() -> Path:
    return Path(settings.VAR_DIR) / UPLOADS


def _stage(request: HttpRequest, data: bytes, server: Server, alter: bool) -> str:
    """Keep the upload for the save step; the token names it, and only this account may use it."""
    _uploads().mkdir(parents=True, exist_ok=True)
    name = uuid.uuid4().hex
    (_uploads() / name).write_bytes(data)
    return signing.dumps({"file": name, "server": server.pk, "alter": alter, "account": request.user.pk}, salt=_SALT)


def _unstage(request: HttpRequest, token: str) -> tuple[Path, dict[str, Any]]:
    try:
        staged = signing.loads(token, salt=_SALT, max_age=_UPLOAD_HOURS * 3600)
    except signing.BadSignature as exc:
        raise Http404("This preview has expired: upload the card again.") from exc
    if staged.get("account") != request.user.pk:
        raise Http404("No such preview.")
    return _uploads() / str(staged["file"]), staged


class CardPersonaAdmin(PersonaAdmin):
    change_list_template = "admin/characters/persona_change_list.html"
    change_form_template = "admin/characters/persona_change_form.html"

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "import-card/", self.admin_site.admin_view(self.import_card_view), name="personas_persona_import_card"
            ),
            path(
                "<path:object_id>/card.<str:kind>",
                self.admin_site.admin_view(self.card_view),
                name="personas_persona_card",
            ),
        ]
        return own + super().get_urls()

    def card_view(self, request: HttpRequest, object_id: str, kind: str) -> HttpResponse:
        persona = self.get_object(request, object_id)  # 404 outside the account's servers
        if kind not in ("png", "json"):
            raise Http404("A card is .png or .json.")
        return card_download(persona, kind)

    def _page(self, request: HttpRequest, template: str, **context: Any) -> TemplateResponse:
        context = {**self.admin_site.each_context(request), "opts": Persona._meta, "title": "Import a card", **context}
        return TemplateResponse(request, f"admin/characters/{template}", context)

    def import_card_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise Http404("No such page.")
        servers = scoped_like_admin(self.admin_site, request, Server.objects.order_by("name"))
        if request.method == "POST" and "token" in request.POST:
            return self._save(request, request.POST["token"], servers)
        form = CardUploadForm(request.POST or None, request.FILES or None)
        form.fields["server"].queryset = servers  # type: ignore[attr-defined]
        if request.method != "POST" or not form.is_valid():
            return self._page(request, "import_card.html", form=form)
        server, alter = form.cleaned_data["server"], form.cleaned_data["alter"]
        token = _stage(request, form.cleaned_data["file"], server, alter)
        main = None if alter else server.personas.filter(is_alter=False).first()
        return self._page(
            request, "card_preview.html", card=form.card, server=server, alter=alter, main=main, token=token
        )

    def _save(self, request: HttpRequest, token: str, servers: Any) -> HttpResponse:
        staged_file, staged = _unstage(request, token)
        server = servers.filter(pk=staged["server"]).first()
        try:
            if server is None or not staged_file.is_file():
                raise Http404("This preview has expired: upload the card again.")
            card = read_card(staged_file.read_bytes())
            persona = import_card(server, card, as_alter=bool(staged["alter"]), actor=Actor.admin(request.user))
        except (CardError, ActionError) as exc:
            messages.error(request, f"Not imported: {exc}")
            return HttpResponseRedirect(reverse("admin:personas_persona_import_card"))
        finally:
            staged_file.unlink(missing_ok=True)
        messages.success(request, f"Imported {persona.persona_nickname} into {server}.")
        return HttpResponseRedirect(reverse("admin:personas_persona_change", args=[persona.pk]))


admin.site.unregister(Persona)
admin.site.register(Persona, CardPersonaAdmin)


class LorebookEntryInline(ServerScopedAdminMixin, admin.StackedInline):
    model = LorebookEntry
    server_field = "lorebook__server"
    extra = 0
    fields = [
        ("uid", "comment", "enabled"),
        ("keys", "secondary_keys", "selective", "selective_logic"),
        "content",
        ("constant", "insertion_order", "position", "depth"),
        ("scan_depth", "case_sensitive", "match_whole_words"),
    ]


@admin.register(Lorebook)
class LorebookAdmin(ServerScopedAdminMixin, AuditedAdmin):
    list_display = ["__str__", "server", "persona", "scan_depth", "token_budget"]
    list_select_related = ["server", "persona"]
    list_filter = [("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "server__name", "=server__server_disc_id"]
    fields = ["server", "persona", "name", "description", "scan_depth", "token_budget"]
    inlines = [LorebookEntryInline]
