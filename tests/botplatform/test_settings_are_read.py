"""Every setting on the server and persona forms is read by code outside its model and the admin
(issue 16: "settings that do nothing" are implemented or taken off the forms). Columns kept for the
turn snapshot's sake but read by nothing are stored and not shown (README, "Settings").

The check greps the application code for a read of each form field: an attribute (``.name``) or a
query lookup (``__name``). The model, the admin and the migrations do not count, since they only
store and show it; nor does the loader that copies rows into ``ServerConfig`` / ``PersonaInfo``
(``chatcontext/repository.py``): a copied field counts only where its copy is read.
"""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model

from personas.models import Persona, PersonaAttribute, Server, ServerSettings
from tests.botplatform.admin_forms import form_fields, root_request
from tests.paths import PROJECT_PACKAGES
from tests.paths import REPO_ROOT as ROOT

pytestmark = pytest.mark.django_db

# Where a field is stored, shown or copied rather than read.
NOT_READERS = re.compile(
    r"^personas/(models/|admin[^/]*\.py$|admin/)|^community/admin/|/migrations/|^chatcontext/(repository|types)\.py$"
)
LOADER = ROOT / "chatcontext/repository.py"
# Form controls, not settings: a parent link and the checkbox that clears the stored key.
FORM_CONTROLS = {"server", "persona", "id", "clear_llm_api_key"}
# Stored for snapshot compatibility and read by nothing yet: kept off the forms, where a setting
# that changes nothing would mislead. One that code starts reading goes back on its form.
UNREAD_COLUMNS = {
    "server settings": {"humanizer_degree", "user_blocking_enabled", "private_channel_ids"},
    "persona": {"humanizer_degree", "is_pointer", "preset_lineage_id", "preset_language"},
}


def _reader_source() -> str:
    files = [
        path
        for app in PROJECT_PACKAGES
        for path in sorted((ROOT / app).rglob("*.py"))
        if not NOT_READERS.search(path.relative_to(ROOT).as_posix())
    ]
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


def _copies() -> dict[str, str]:
    """Model field → the ``ServerConfig`` / ``PersonaInfo`` attribute the loader copies it to."""
    pairs = re.findall(r"(\w+)=(?:s|persona|server|a)\.(\w+)\b", LOADER.read_text(encoding="utf-8"))
    return {field: attribute for attribute, field in pairs}


def _is_read(name: str, source: str) -> bool:
    # The traits reach the prompt in their order: the model's default ordering is the read.
    if name in PersonaAttribute._meta.ordering:
        return True
    read = re.compile(rf"(\.|__){name}\b")
    copy = _copies().get(name)
    return read.search(source) is not None or (copy is not None and re.search(rf"\.{copy}\b", source) is not None)


@pytest.fixture
def forms_of() -> tuple[Server, Persona]:
    get_user_model().objects.create_superuser("root")
    server = Server.objects.create(server_disc_id="7100", name="Zephyr Hall")
    return server, Persona.objects.create(server=server, persona_nickname="Zephyra")


def _settings(server: Server, persona: Persona) -> dict[str, set[str]]:
    inlines = {
        model: {type(i).model: type(i) for i in admin.site._registry[model].get_inline_instances(root_request(), obj)}
        for model, obj in ((Server, server), (Persona, persona))
    }
    pages = {
        "server": form_fields(Server, server),
        "server settings": form_fields(Server, server, inlines[Server][ServerSettings]),
        "persona": form_fields(Persona, persona),
        "persona attributes": form_fields(Persona, persona, inlines[Persona][PersonaAttribute]),
    }
    return {page: set(fields) - FORM_CONTROLS for page, fields in pages.items()}


def test_every_setting_on_the_server_and_persona_forms_is_read_by_the_platform(
    forms_of: tuple[Server, Persona],
) -> None:
    source = _reader_source()
    settings = _settings(*forms_of)
    assert len(settings["server settings"]) >= 25 and settings["persona"]  # the forms were walked
    unread = sorted(
        f"{page}: {name}" for page, names in settings.items() for name in names if not _is_read(name, source)
    )
    assert unread == []


def test_columns_nothing_reads_are_stored_but_not_on_the_forms(forms_of: tuple[Server, Persona]) -> None:
    source = _reader_source()
    settings = _settings(*forms_of)
    models = {"server settings": ServerSettings, "persona": Persona}
    for page, names in UNREAD_COLUMNS.items():
        assert not names & settings[page], page
        for name in names:
            models[page]._meta.get_field(name)  # the column stays
            assert not _is_read(name, source), f"{name} is read now: put it back on the {page} form"
