"""z3 claims, configuration check and trace ordering under clock skew (issue 6).

- `spec.claims.registry.all_claims()` / `run_all()`: every ordering and timing claim of the seeds, each
  with its requirement ID, expected verdict and twin (`engine.py` runs them).
- `spec.claims.config.check_config(settings)`: a deployment's settings against the seeds' constraints.
- `spec.claims.skew.check_skew(events, skew, orderings)`: required orderings under clock skew, per entity.
- `spec.claims.cli.register(subparsers)`: `prove` and `validate-config` for the `haconform` CLI.
Findings, especially claims refuted as the seeds state them, are in `spec/CLAIMS.md`.
"""
