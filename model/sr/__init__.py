"""Shadow redundancy (Exchange Server 2013 transport), seed 000_bc7da9fde6232d0b.txt.

The package is the reference model of `spec/requirements/sr.toml`: `rules.py` (pure transition rules),
`cluster.py` and `sim.py` (the generator on the kernel), `monitor.py` (the trace monitor, same rules),
`properties.py`, `protocol.py`, `mutants.py`. See `README.md`.
"""
