from django.apps import AppConfig


class ChatcontextConfig(AppConfig):
    name = "chatcontext"
    # The admin's section of prompt records and voice transcripts.
    verbose_name = "Prompt inspector"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chatcontext import server_usage, signals  # noqa: F401  (signals connects the live-feed announcer)

        server_usage.register()
