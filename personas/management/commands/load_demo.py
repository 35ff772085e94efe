"""``manage.py load_demo``: the "Night Owls Demo" server that ``make run`` shows in the admin and the
playground: a main persona and an alter, users at every privacy level, memories in several lineages,
reminders and a self-task, a blacklisted user and a persona block. Its Discord ids are realistic
snowflakes (17–20 digits whose time bits give a plausible creation time), like every id the product
meets: rules such as custom-emoji tags (BC3-19) and pings (X-08) only recognise such ids.

It never rewrites anyone's work: when the demo server exists, nothing is written at all, so a
memory a moderator corrected, a forgotten user's deleted reminder, a changed privacy level, price or
setting stay as they are on every later run (``make run`` runs it on each start). ``--reset`` deletes
the demo server and rebuilds it on purpose; ``--if-no-servers`` loads it only into a database that has
no server yet (what ``make run`` does, so a production database never gets the demo).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from personas.actions.versions import bump_server, bump_user_rows
from personas.models import (
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonaAttribute,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    Server,
    ServerEmoji,
    ServerMember,
    ServerMemory,
    ServerSettings,
    UserPersonaNamingPreference,
)

DEMO_SERVER_DISC_ID = "904493457735819273"
DEMO_SERVER_NAME = "Night Owls Demo"
DEMO_CHANNEL_DISC_ID = "904494141407371278"
DEMO_BOT_DISC_ID = "816641092878340097"
DEMO_ROLE_REGULAR = "904656058318979074"
DEMO_ROLE_MODERATOR = "904494950908035076"
# username → Discord id of the demo's people.
DEMO_USERS = {
    "mina": "554947007479939075",
    "jun": "663457372307460117",
    "rei": "493428865499398150",
    "okabe": "256267486494720011",
    "sora": "987315681886343176",
}
REGULAR = {"id": DEMO_ROLE_REGULAR, "name": "Regular", "position": 2}
MODERATOR = {"id": DEMO_ROLE_MODERATOR, "name": "Moderator", "position": 5}

# (username, global_name, privacy level, saved nickname, pronouns, member nickname, roles)
USERS: list[tuple[str, str, PrivacyLevel, str | None, str | None, str | None, list[dict[str, Any]]]] = [
    ("mina", "Mina", PrivacyLevel.MINIMAL, "Minnie", "she/her", "Mina-chan", [REGULAR]),
    ("jun", "Jun", PrivacyLevel.PARTIAL, None, None, None, []),
    ("rei", "Rei", PrivacyLevel.FULL, "Ray", None, None, []),
    ("okabe", "Okabe", PrivacyLevel.MINIMAL, None, None, None, [MODERATOR, REGULAR]),
    ("sora", "Sora", PrivacyLevel.MINIMAL, None, "they/them", "Sora ☁", []),
]  # fmt: skip
# (Discord id, name, emotion) of the server's custom emojis.
EMOJIS = (("942874225017098241", "owl_wave", "happy"), ("942874552172810242", "sleepy_owl", "tired"))


class Command(BaseCommand):
    help = (
        "Create or refresh the 'Night Owls Demo' server: main persona Tomori and alter Pip (public and "
        "private attributes), users at every privacy level (Mina MINIMAL, Jun PARTIAL, Rei FULL), personal "
        "memories in each persona's lineage and in lineage 0 (global), a server memory, human reminders and "
        "a persona self-task, a blacklisted user (Okabe), a persona block (Pip blocks Sora) and members with "
        "roles. Created only when absent: an existing demo server is left exactly as it is (--reset rebuilds it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset", action="store_true", help="Delete the demo server and its people's data, then rebuild it."
        )
        parser.add_argument(
            "--if-no-servers", action="store_true", help="Load the demo only when the database has no server at all."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic(durable=True):
            existing = Server.objects.select_for_update().filter(server_disc_id=DEMO_SERVER_DISC_ID).first()
            if options["if_no_servers"] and Server.objects.exists() and not options["reset"]:
                self.stdout.write("This database already has servers: the demo is not loaded (DEMO=1 loads it).")
                return
            if existing is not None and not options["reset"]:
                self.stdout.write(f"Demo '{DEMO_SERVER_NAME}' already present, nothing changed (--reset rebuilds it).")
                return
            if existing is not None:
                self.remove(existing)
            server = self.load()
            # A running bot or web process may keep these rows (chatcontext.personalization).
            bump_user_rows()
            bump_server(server.server_id)
        self.stdout.write(self.style.SUCCESS(f"Demo server '{DEMO_SERVER_NAME}' is ready."))

    def remove(self, server: Server) -> None:
        """The demo server with everything hanging off it, and what its fictional people carry
        across servers (memories, naming preferences): the rebuild must not leave them twice."""
        demo_users = DiscordUser.objects.filter(user_disc_id__in=[*DEMO_USERS.values(), DEMO_BOT_DISC_ID])
        PersonalMemory.objects.filter(user__in=demo_users).delete()
        UserPersonaNamingPreference.objects.filter(user__in=demo_users).delete()
        server.delete()
        self.step(f"removed the previous demo server {DEMO_SERVER_NAME} and its people's memories")

    def step(self, message: str) -> None:
        self.stdout.write(f"  · {message}")

    def load(self) -> Server:
        now = timezone.now()
        server, _ = Server.objects.update_or_create(
            server_disc_id=DEMO_SERVER_DISC_ID,
            defaults={"name": DEMO_SERVER_NAME, "description": "Late-night chat and games (demo data)"},
        )
        ServerSettings.objects.update_or_create(
            server=server,
            defaults={
                "message_fetch_limit": 50,
                "timezone_offset": Decimal(9),
                "memory_tagging_enabled": False,
                # Example prices per million tokens, so the demo's records and server list show a cost.
                "llm_input_price": Decimal("0.15"),
                "llm_output_price": Decimal("0.60"),
            },
        )
        self.step(
            f"server {server.name} ({server.server_disc_id}) with settings (UTC+9, 50 messages, "
            "example prices 0.15 / 0.60 per million tokens)"
        )

        tomori, _ = Persona.objects.update_or_create(
            server=server,
            persona_nickname="Tomori",
            defaults={
                "is_alter": False,
                "trigger_words": ["tomori"],
                "persona_prompt": "Tomori is a calm night-shift librarian.",
                "physical_appearance_tags": ["short hair", "glasses"],
                "sample_dialogue": [
                    {"role": "user", "text": "Still awake, Tomori?"},
                    {"role": "model", "text": "The library never really sleeps. Neither do I."},
                ],
            },
        )
        pip, _ = Persona.objects.update_or_create(
            server=server,
            persona_nickname="Pip",
            defaults={
                "is_alter": True,
                "trigger_words": ["pip"],
                "persona_prompt": "Pip is an excitable parrot.",
                "physical_appearance_tags": ["green feathers"],
            },
        )
        for persona, attributes in (
            (tomori, [("Loves old detective novels", True), ("Secretly afraid of thunder", False)]),
            (pip, [("Collects shiny buttons", True), ("Cannot actually fly very far", False)]),
        ):
            for order, (text, is_public) in enumerate(attributes, start=1):
                PersonaAttribute.objects.update_or_create(
                    persona=persona, attribute_order=order, defaults={"attribute_text": text, "is_public": is_public}
                )
        self.step(
            f"personas Tomori (main, lineage {tomori.persona_lineage_id}) and Pip "
            f"(alter, lineage {pip.persona_lineage_id}), each with a public and a private attribute"
        )

        users: dict[str, DiscordUser] = {}
        for username, global_name, level, nickname, pronouns, member_nick, roles in USERS:
            disc_id = DEMO_USERS[username]
            users[username], _ = DiscordUser.objects.update_or_create(
                user_disc_id=disc_id,
                defaults={
                    "username": username,
                    "global_name": global_name,
                    "privacy_level": level,
                    "user_nickname": nickname,
                    "pronouns": pronouns,
                },
            )
            ServerMember.objects.update_or_create(
                server=server,
                user_disc_id=disc_id,
                defaults={
                    "username": username,
                    "global_name": global_name,
                    "nickname": member_nick,
                    "display_name": member_nick or global_name,
                    "roles": roles,
                    "presence_status": "online",
                },
            )
        DiscordUser.objects.update_or_create(
            user_disc_id=DEMO_BOT_DISC_ID, defaults={"username": "tomoribot", "global_name": "Tomori"}
        )
        ServerMember.objects.update_or_create(
            server=server,
            user_disc_id=DEMO_BOT_DISC_ID,
            defaults={"username": "tomoribot", "global_name": "Tomori", "display_name": "Tomori", "is_bot": True},
        )
        users["mina"].timezone_offset = 9
        users["mina"].physical_appearance_tags = ["red scarf"]
        users["mina"].save(update_fields=["timezone_offset", "physical_appearance_tags", "updated_at"])
        self.step("users Mina (MINIMAL), Jun (PARTIAL), Rei (FULL), Okabe, Sora and the bot, all server members")

        memories = [
            (users["mina"], tomori.persona_lineage_id, "{user} is studying for a chemistry exam", ["school"]),
            (users["mina"], GLOBAL_LINEAGE_ID, "{user} prefers green tea", []),
            (users["mina"], pip.persona_lineage_id, "{user} taught {bot} a whistle", []),
            (users["rei"], tomori.persona_lineage_id, "{user} lives near the station", []),
            (users["okabe"], tomori.persona_lineage_id, "{user} runs the Friday game night", ["#lounge"]),
            (users["sora"], GLOBAL_LINEAGE_ID, "{user} draws the server's event banners", []),
        ]
        for user, lineage, content, tags in memories:
            PersonalMemory.objects.update_or_create(
                user=user, persona_lineage_id=lineage, content=content, defaults={"tags": tags}
            )
        ServerMemory.objects.update_or_create(
            server=server,
            persona_lineage_id=tomori.persona_lineage_id,
            content="Game night is every Friday at 21:00",
            defaults={"persona": tomori, "user": users["okabe"], "tags": ["events"]},
        )
        UserPersonaNamingPreference.objects.update_or_create(
            user=users["mina"], persona_lineage_id=pip.persona_lineage_id, defaults={"nickname_override": "Birdie"}
        )
        self.step(f"{len(memories)} personal memories (Tomori's, Pip's and global lineage 0) and a server memory")

        mina, jun = DEMO_USERS["mina"], DEMO_USERS["jun"]
        reminders = [
            (mina, "Mina", "Remind Mina about the chemistry exam", tomori, False, None, timedelta(hours=10)),
            (jun, "Jun", "Ask Jun how the move went", pip, False, None, timedelta(days=2)),
            (DEMO_BOT_DISC_ID, "Tomori", "Post the book-club poll", tomori, True, 168, timedelta(days=1)),
        ]
        for target, nickname, purpose, persona, self_task, repeat, due_in in reminders:
            Reminder.objects.update_or_create(
                server=server,
                user_discord_id=target,
                reminder_purpose=purpose,
                defaults={
                    "channel_disc_id": DEMO_CHANNEL_DISC_ID,
                    "user_nickname": nickname,
                    "persona": persona,
                    "self_reminder": self_task,
                    "repetition_interval_hours": repeat,
                    "reminder_time": now + due_in,
                    "status": Reminder.Status.PENDING,
                    "next_attempt_at": None,
                    "delivery_retry_count": 0,
                    "last_error": "",
                },
            )
        self.step("two human reminders and Tomori's weekly self-task, all pending")

        PersonalizationBlacklist.objects.update_or_create(
            server=server, user_disc_id=DEMO_USERS["okabe"], defaults={"reason": "Asked not to be personalized (demo)"}
        )
        PersonaUserBlock.objects.update_or_create(
            server=server,
            persona=pip,
            user_disc_id=DEMO_USERS["sora"],
            defaults={
                "block_type": PersonaUserBlock.BlockType.BLOCK,
                "reason": "Kept teasing Pip (demo)",
                "expires_at": now + timedelta(days=30),
            },
        )
        self.step("Okabe on the personalization blacklist; Pip blocks Sora for 30 days")

        for emoji_id, name, emotion in EMOJIS:
            ServerEmoji.objects.update_or_create(
                server=server, emoji_disc_id=emoji_id, defaults={"emoji_name": name, "emotion_key": emotion}
            )
        self.step("two server emojis")
        return server
