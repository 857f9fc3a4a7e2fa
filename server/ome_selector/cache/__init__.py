"""The cache: manifests and CacheObjects -> domain (ingest), the immutable Snapshot, and the store that swaps it."""
