"""What a persona does besides replying (issue 15): tool calls that remember, remind and react.

``registry`` lists the tools (each a thin adapter over ``personas.actions.tool_actions``, which keeps every
rule), ``gating`` decides which the turn offers, ``loop`` runs the bounded rounds of calls between
the provider and the tools, ``notices`` are the confirmations posted in the channel, and
``mentions`` turns ``@handle`` in the reply into real pings.
"""
