"""Imported message tracking logs (mechanism `msgtrk`; seed 000, interpretations SR-I26..SR-I28).

`events` (the mechanism name and the IMPORT_START marker), `rules` (the `Rule` rows), `monitor` (the
trace monitor), `mechanism` (the registry's entry). The reader and importer of real logs are in
`conformance.audit`, above the registry. Nothing is imported here: import the module you need.
"""
