"""The server process: options, logging, the per-RPC interceptor, lifecycle, HTTP probes and metrics."""
