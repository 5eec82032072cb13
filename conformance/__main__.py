"""`python -m conformance` is the `haconform` command."""

import sys

from conformance.cli import main

sys.exit(main())
