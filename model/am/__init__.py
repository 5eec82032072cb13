"""Active Manager and best copy and server selection (seed 002_46acbb50977df48d.txt).

`mechanism.py` holds `MECHANISM` for the registry (`model.registry` imports it by name): the generator
(`sim.simulate`), the trace monitor (`monitor.AmMonitor`) and the mutants (`mutants.SIMULATORS`). See
`README.md`.
"""
