"""Typed Python client for the ome-selector gRPC API (``ome.selector.v1``)."""

from ome_selector_client.client import SelectorClient, SelectorError

__all__ = ["SelectorClient", "SelectorError"]
