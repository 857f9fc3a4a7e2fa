"""``ome-selector``: the command line (parser, commands, rendering)."""

from ome_selector.cli.app import main

__all__ = ["main"]
