"""The admins live with their models (``records.admin``, ``voice.admin``); the admin's autodiscovery
imports this module, which brings them in."""

from chatcontext.records import admin as records_admin  # noqa: F401
from chatcontext.voice import admin as voice_admin  # noqa: F401
