from django.apps import AppConfig


class ChatcontextConfig(AppConfig):
    name = "chatcontext"
    # The admin's section of prompt records and voice transcripts.
    verbose_name = "Prompt inspector"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The admins live with their models rather than in chatcontext/admin.py, so the admin's
        # autodiscovery would miss them; the signals module connects the live-feed announcer.
        from chatcontext.records import admin, signals, user_records  # noqa: F401
        from chatcontext.records.forgetting import PromptRecords
        from chatcontext.voice import admin as voice_admin  # noqa: F401
        from personas.forgetting import register_prompt_record_store

        # personas' forget-me and retention delete this app's rows through it (personas imports no chatcontext).
        register_prompt_record_store(PromptRecords())
        # The records a user appears in, for the user view and export (personas.user_records).
        user_records.register()
