"""Imported message tracking logs (mechanism `msgtrk`; seed 000, interpretations SR-I26..SR-I29).

`events` (the mechanism name and the IMPORT_START marker), `rules` (the `Rule` constants and their table),
`monitor` (the trace monitor), with its parts `judging` (the recorded configuration, the judgement in progress),
`shadows` (one message's shadow), `orders` (orders across servers' clocks) and `smtpmon` (the replies to the
sender, from SMTP protocol logs); `mechanism` (the registry's entry). The reader and importer of real logs are
in `conformance.audit`, above the registry. Nothing is imported here: import the module you need.
"""
