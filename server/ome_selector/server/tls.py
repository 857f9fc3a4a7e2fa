"""TLS credentials of the API listener, read again when their files change.

Kubernetes updates a mounted Secret by writing a new ``..2026_...`` folder and swapping the
``..data`` symlink to it, so the paths stay and what they resolve to changes; cert-manager
rotates certificates that way. gRPC asks ``CertificateFiles.fetch`` for the configuration at
every TLS handshake (``grpc.dynamic_ssl_server_credentials``); it answers None (keep the one in
use) until a file's identity (device, inode, size, mtime, after following symlinks) changes,
then reads the certificate chain, the key and the client CA bundle again. A half-written or
mismatched pair is logged and the previous configuration stays in use until the files are whole.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading

import grpc

__all__ = ["CertificateFiles", "server_credentials"]

log = logging.getLogger("ome_selector.server")

_Identity = tuple[tuple[int, int, int, int], ...]


class CertificateFiles:
    """The PEM files of one listener: ``cert`` (chain), ``key``, and ``client_ca`` (None
    without mTLS). ``load()`` reads them (``OSError``/``ssl.SSLError`` when unusable)."""

    def __init__(self, cert: str, key: str, client_ca: str | None) -> None:
        self.cert, self.key, self.client_ca = cert, key, client_ca
        self._lock = threading.Lock()
        self._loaded: _Identity | None = None  # the files' identity the configuration was read from
        self._failed: _Identity | None = None  # the last identity that could not be used (logged once)
        self.reloads = 0

    def _paths(self) -> tuple[str, ...]:
        return (self.cert, self.key) if self.client_ca is None else (self.cert, self.key, self.client_ca)

    def _identity(self) -> _Identity:
        found = []
        for path in self._paths():
            st = os.stat(path)  # follows the ..data symlink
            found.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(found)

    def _identity_or_none(self) -> _Identity | None:
        try:
            return self._identity()
        except OSError:
            return None

    def load(self) -> grpc.ServerCertificateConfiguration:
        """Read and check the files now; the configuration gRPC serves."""
        identity = self._identity()
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(self.cert, self.key)  # pair matches
        with open(self.key, "rb") as key, open(self.cert, "rb") as cert:
            pair = (key.read(), cert.read())
        ca = None
        if self.client_ca is not None:
            with open(self.client_ca, "rb") as bundle:
                ca = bundle.read()
            ssl.create_default_context(cadata=ca.decode("ascii", "replace"))  # a readable bundle
        self._loaded = identity
        return grpc.ssl_server_certificate_configuration([pair], root_certificates=ca)

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's fetch callback: a new configuration when the files changed, else None."""
        with self._lock:
            try:
                identity = self._identity()
                if identity == self._loaded or identity == self._failed:
                    return None
                config = self.load()
            except (OSError, ValueError, ssl.SSLError) as exc:
                now = self._identity_or_none()
                if now is None or now != self._failed:
                    self._failed = now
                    log.warning("TLS files changed but cannot be used yet, keeping the previous ones: %s", exc)
                return None
            self._failed = None
            self.reloads += 1
            log.info("TLS certificate reloaded from %s", self.cert)
            return config


def server_credentials(cert: str, key: str, client_ca: str | None) -> grpc.ServerCredentials:
    """Credentials that serve ``cert``/``key`` and, with ``client_ca``, require client
    certificates that chain to it (mTLS); each is read again when its file changes. ``OSError``
    (or ``ssl.SSLError``, a ``OSError``) when the files cannot be used at start."""
    files = CertificateFiles(cert, key, client_ca)
    return grpc.dynamic_ssl_server_credentials(
        files.load(),
        files.fetch,  # type: ignore[arg-type]  # gRPC takes None for "unchanged"; grpc-stubs omits it
        require_client_authentication=client_ca is not None,
    )
