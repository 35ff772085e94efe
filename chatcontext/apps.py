from django.apps import AppConfig


class ChatcontextConfig(AppConfig):
    name = "chatcontext"
    # The admin's section of prompt records and voice transcripts.
    verbose_name = "Prompt inspector"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the live-feed announcer (Django's post_save receiver).
        from chatcontext.records import signals  # noqa: F401
