"""The Discord surface: the discord.py client (``client``) and its cogs (``exts``, loaded in
``setup_hook``), the transport over a live channel (``transport``), delivery (``delivery``: splitting,
native replies, alter webhooks) and the outlets of message and reminder turns (``turns``,
``reminder_turns``). It imports ``bot.conversation``, never ``bot.playground``.
"""
