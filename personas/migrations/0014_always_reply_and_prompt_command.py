"""Always-reply and the /prompt switch now do what they say (issue 16, item 5).

``prompt_snapshot_enabled`` had been read by nothing, and /prompt answered on every server; it now
turns /prompt on and off, on by default. Existing rows are switched on so no server loses the
command by this upgrade (their stored off had not been anyone's choice of anything).
"""

from django.db import migrations, models


def keep_prompt_command(apps, schema_editor):
    apps.get_model("personas", "ServerSettings").objects.update(prompt_snapshot_enabled=True)


class Migration(migrations.Migration):

    dependencies = [
        ('personas', '0013_server_model_prices'),
    ]

    operations = [
        migrations.AlterField(
            model_name='serversettings',
            name='always_reply_enabled',
            field=models.BooleanField(default=False, help_text="On: the main persona answers every message people post in this server's channels, no trigger needed (also in deliberate trigger mode); alters still answer only when triggered. Privacy-Full, muted and blocking users are still not answered, and bots never are.", verbose_name='always reply'),
        ),
        migrations.AlterField(
            model_name='serversettings',
            name='prompt_snapshot_enabled',
            field=models.BooleanField(default=True, help_text="On: moderators (Manage Server) can ask the bot on Discord with /prompt last for a link to the prompt inspector's record of the latest turn. Off: the command says it is turned off here. Every turn is recorded either way (kept for the retention days above) and stays in the admin's Prompt records.", verbose_name='/prompt command'),
        ),
        migrations.RunPython(keep_prompt_command, migrations.RunPython.noop, elidable=True),
    ]
