"""Typed Python client for the ome-selector gRPC API (``ome.selector.v1``)."""

from ome_selector_client.client import (
    SelectionWatch,
    SelectorClient,
    SelectorError,
    channel_options,
    service_config,
)

__all__ = ["SelectionWatch", "SelectorClient", "SelectorError", "channel_options", "service_config"]
