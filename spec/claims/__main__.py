"""`python -m spec.claims prove | validate-config FILE`."""

from spec.claims.cli import main

raise SystemExit(main())
