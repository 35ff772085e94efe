"""The admin pages that span personas and prompt records, registered as subclasses of personas'
admins (found by Django's admin autodiscovery, as ``community.admin``)."""

from community.admin import servers, users  # noqa: F401
