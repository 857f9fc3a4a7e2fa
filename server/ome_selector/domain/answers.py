"""Bounds on answers (README, "Deviations from OME"): what a caller reads stays small whatever the
number of runtimes in scope.

- ``DEFAULT_MAX_MESSAGE_BYTES``: UTF-8 bytes of OME's ``no runtime found`` message at most (8 KiB;
  ``serve --max-message-bytes``, 0 for no cap). etcd refuses objects over 1.5 MiB, so OME itself
  could not store a condition holding the whole list at 10,000 runtimes.
- ``DEFAULT_CANDIDATE_LIMIT``: ranked candidates a BASIC SelectRuntime answer carries
  (``candidate_limit`` overrides it, 0 = all).
"""

from __future__ import annotations

DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024
DEFAULT_CANDIDATE_LIMIT = 10
