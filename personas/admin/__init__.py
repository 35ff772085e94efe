"""Django admin for everything a moderator touches (data-model.md §2).

Changelists cost a constant number of queries per page whatever the table size: every column that
crosses a relation is covered by ``list_select_related`` or a correlated subquery annotation, and
counts that get expensive on a 10,000-memory server are switched off (``show_full_result_count``).
Mutations with rules (memory limits, privacy, blacklist) go through ``personas.actions`` and
forget-me through ``community.forget``, so the admin, the API and the bot enforce the same rules.
"""

from django.contrib import admin
from django.urls import reverse_lazy
from django_celery_beat.models import ClockedSchedule, SolarSchedule

# Each module registers the admins of its models (mirroring personas/models/).
from personas.admin import (  # noqa: F401
    access,
    memories,
    moderation,
    personas,
    presets,
    reminders,
    servers,
    steering,
    users,
)

# Beat's solar and clocked schedules: the platform's periodic tasks run on intervals
# (migration personas.0004), and nobody operating it needs sunrise or one-off schedules.
admin.site.unregister(ClockedSchedule)
admin.site.unregister(SolarSchedule)

admin.site.site_header = "Tomori Platform"
admin.site.site_title = "Tomori Platform admin"
admin.site.index_title = "Personas, memories and what each persona is told"
# The app list beside every page took a quarter of a 1280 px window from the lists; the home page
# and the breadcrumbs lead everywhere it did.
admin.site.enable_nav_sidebar = False
# "View site" opens the playground: the site's own page besides the console (the bare address is the admin).
# Lazy: the URLconf is not loaded yet while admins register (django-stubs types site_url as str).
admin.site.site_url = reverse_lazy("playground:index")  # type: ignore[assignment]
