"""The vocabulary of an imported message tracking log (mechanism `msgtrk`, interpretation SR-I26): the
mechanism name its rows record and the kind of the marker that begins every imported trace (TR-008).

Below the importer (`conformance.audit.importer`, which writes them) and the monitor that judges them
(`model.msgtrk.monitor`), so that both, and the engine's rule sets (`conformance.engine.rulesets`), read
one definition.
"""

from __future__ import annotations

from spec.catalogue import require

require("TR-008")

MECHANISM = "msgtrk"
IMPORT_KIND = "IMPORT_START"
