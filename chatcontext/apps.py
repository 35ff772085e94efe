from django.apps import AppConfig


class ChatcontextConfig(AppConfig):
    name = "chatcontext"
    # The admin's section of prompt records and voice transcripts.
    verbose_name = "Prompt inspector"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chatcontext.records import admin, signals  # noqa: F401  (the inspector admin; the live-feed announcer)
        from chatcontext.voice import admin as voice_admin  # noqa: F401
