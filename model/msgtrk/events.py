"""The vocabulary of an imported message tracking log (mechanism `msgtrk`, interpretation SR-I26): the
mechanism name its rows record, the kind of the marker that begins every imported trace (TR-008), the
tracking events that are a message's next hop, and the kinds of the SMTP protocol-log events.

Below the importer (`conformance.audit.importer`, which writes them) and the monitor that judges them
(`model.msgtrk.monitor`), so that both, and the engine's rule sets (`conformance.engine.rulesets`), read
one definition.
"""

from __future__ import annotations

from spec.catalogue import require

require("TR-008")

MECHANISM = "msgtrk"
IMPORT_KIND = "IMPORT_START"
NEXT_HOP_SEND = frozenset({"SEND", "SENDEXTERNAL"})
NEXT_HOP = NEXT_HOP_SEND | {"DELIVER"}  # the primary's next hop (SR-I26)
# the kinds of the events made from SMTP protocol logs (`conformance.audit.smtpjoin`, interpretation SR-I29)
REPLY = "SMTP_DATA_REPLY"
SHADOW_CMD = "SMTP_SHADOW_COMMAND"
SESSION = "SMTP_SESSION"
SMTP_KINDS = frozenset({REPLY, SHADOW_CMD, SESSION})
