"""The serving certificate, reloaded when its files change.

The files are polled like a mounted Secret must be (`app.polling`). A new pair is loaded into
a fresh context: a mismatched key, garbage, or a certificate that is expired or not yet valid is
rejected, logged and counted, and the old pair keeps serving. A good context replaces the
current one, so new handshakes get the new certificate while open connections finish.
"""

from __future__ import annotations

import logging
import ssl
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509

from jobguard.app.server.polling import FilePoller, Polled

log = logging.getLogger("jobguard.tls")


class CertificateError(ValueError):
    """A certificate/key pair that cannot serve."""


class TLSManager(Polled):
    def __init__(
        self,
        cert_file: str,
        key_file: str,
        client_ca_file: str | None = None,
        interval: float = 10.0,
        observer: Callable[[bool, datetime | None], None] | None = None,
    ) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self.client_ca_file = client_ca_file
        self.observer = observer
        """Told (ok, new expiry) after every reload attempt (metrics)."""
        self.serving = False
        """Set once the server listens with this context."""
        self.poller = FilePoller(
            [cert_file, key_file],
            self._reload,
            (CertificateError,),
            interval,
            "new certificate",
            log,
            self._observed,
        )
        # uvicorn holds `context` for good; every handshake is switched (SNI callback, which
        # runs with or without SNI) to `_current`, replaced whole on each reload. Loading a
        # new pair into one live context would keep an old certificate of another key type.
        self._current = self._new_context()
        self.not_after = self._load_into(self._current)
        self.context = self._new_context()
        self._load_into(self.context)
        self.context.sni_callback = self._switch

    def _new_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        if self.client_ca_file:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(cafile=self.client_ca_file)
        return context

    def _switch(self, connection: ssl.SSLObject, _name: str | None, _base: ssl.SSLContext) -> None:
        connection.context = self._current

    def _load_into(self, context: ssl.SSLContext) -> datetime:
        """Load the current files (read once, so a pair is never torn) or raise."""
        try:
            cert_pem = Path(self.cert_file).read_bytes()
            key_pem = Path(self.key_file).read_bytes()
        except OSError as exc:
            raise CertificateError(f"cannot read the certificate or key: {exc}") from None
        try:
            certificate = x509.load_pem_x509_certificate(cert_pem)
            not_after, not_before = (
                certificate.not_valid_after_utc,
                certificate.not_valid_before_utc,
            )
        except ValueError as exc:
            raise CertificateError(f"{self.cert_file}: not a PEM certificate: {exc}") from None
        now = datetime.now(UTC)
        if not_after <= now:
            raise CertificateError(f"{self.cert_file}: expired at {not_after.isoformat()}")
        if not_before > now:
            raise CertificateError(f"{self.cert_file}: not valid before {not_before.isoformat()}")
        with tempfile.TemporaryDirectory() as tmp:
            cert_copy, key_copy = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            cert_copy.write_bytes(cert_pem)
            key_copy.write_bytes(key_pem)
            try:
                context.load_cert_chain(cert_copy, key_copy)  # rejects garbage, mismatched keys
            except (ssl.SSLError, ValueError) as exc:
                raise CertificateError(f"the certificate and key do not load: {exc}") from None
        return not_after

    def _reload(self) -> None:
        fresh = self._new_context()
        not_after = self._load_into(fresh)
        self._current, self.not_after = fresh, not_after
        log.info("serving certificate reloaded, valid until %s", self.not_after.isoformat())

    def _observed(self, ok: bool) -> None:
        if self.observer is not None:
            self.observer(ok, self.not_after if ok else None)

    def valid_now(self) -> bool:
        return self.not_after > datetime.now(UTC)
