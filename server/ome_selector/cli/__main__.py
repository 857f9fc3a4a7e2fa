"""``python -m ome_selector.cli``: the ``ome-selector`` command."""

import sys

from ome_selector.cli.app import main

sys.exit(main())
