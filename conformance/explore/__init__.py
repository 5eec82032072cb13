"""Exhaustive small-scope exploration of the reference model (issue 22): `haconform explore`.

`engine` (breadth-first search, judging, shortest counterexamples), `spaces` (the harness's protocol steps per
mechanism within a `Bound`), `fingerprint` (canonical state hashing), `manifest` (`spec/explore.toml`),
`cli`. It sits above the conformance harness and the model registry. See `conformance/explore/README.md`.
"""
