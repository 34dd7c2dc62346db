"""`python -m numfuse.bench`: the same as the `numfuse-bench` command."""

import sys

from .cli import main

sys.exit(main())
