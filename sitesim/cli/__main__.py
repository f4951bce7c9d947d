"""``python -m sitesim.cli``: the command line."""

import sys

from sitesim.cli.main import main

sys.exit(main())
