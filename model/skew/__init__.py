"""Orderings across servers' clocks as a trace monitor (issue 6; TR-003, SR-030, SR-031 under a skew
bound): `monitor` (the monitor over `spec.claims.skew`), `mechanism` (the registry's entry). Nothing is
imported here: import the module you need."""
