"""`python -m cluster.cli` runs the `podsched` command."""

import sys

from cluster.cli.main import main

sys.exit(main())
