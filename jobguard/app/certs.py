"""Certificates for the webhook: a CA and a serving certificate (`jobguard certs`)."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PEM = serialization.Encoding.PEM


@dataclass(frozen=True)
class GeneratedCerts:
    ca_crt: Path
    tls_crt: Path
    tls_key: Path

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca_crt.read_bytes()).decode()


def dns_names(service: str, namespace: str) -> list[str]:
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def make_ca(
    common_name: str, days: int, now: datetime.datetime | None = None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = now or _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return cert, key


def issue_serving(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    names: list[str],
    ips: list[str],
    days: int,
    not_before: datetime.datetime | None = None,
    usage: x509.ObjectIdentifier = ExtendedKeyUsageOID.SERVER_AUTH,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A leaf certificate (ECDSA P-256) for the DNS names and IPs, signed by the CA; serving
    by default, or for `usage` (e.g. client authentication)."""
    key = ec.generate_private_key(ec.SECP256R1())
    start = not_before or _now() - datetime.timedelta(minutes=5)
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def write_private(path: Path, data: bytes) -> None:
    """Write a key readable by its owner only (0600), replacing any previous file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o600)


def generate(
    service: str,
    namespace: str,
    out_dir: Path,
    days: int = 365,
    dev: bool = False,
    force: bool = False,
) -> GeneratedCerts:
    """Write ca.crt, tls.crt and tls.key (0600) under out_dir; refuse to overwrite unless force."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = GeneratedCerts(out_dir / "ca.crt", out_dir / "tls.crt", out_dir / "tls.key")
    existing = [p for p in (paths.ca_crt, paths.tls_crt, paths.tls_key) if p.exists()]
    if existing and not force:
        raise FileExistsError(f"{existing[0]} exists (use --force to overwrite)")
    ca_cert, ca_key = make_ca(f"jobguard-ca {service}.{namespace}", days)
    names = dns_names(service, namespace) + (["localhost"] if dev else [])
    cert, key = issue_serving(ca_cert, ca_key, names, ["127.0.0.1"] if dev else [], days)
    paths.ca_crt.write_bytes(ca_cert.public_bytes(PEM))
    paths.tls_crt.write_bytes(cert.public_bytes(PEM))
    write_private(paths.tls_key, key_pem(key))
    return paths


@dataclass(frozen=True)
class CertificateInfo:
    subject: str
    issuer: str
    sans: list[str]
    not_after: datetime.datetime

    def days_left(self, now: datetime.datetime | None = None) -> float:
        return (self.not_after - (now or _now())).total_seconds() / 86400


def inspect(path: Path) -> CertificateInfo:
    """The facts of the first certificate in a PEM file (ValueError when there is none)."""
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        sans = [str(v) for v in san.get_values_for_type(x509.DNSName)]
        sans += [str(v) for v in san.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        sans = []
    return CertificateInfo(
        cert.subject.rfc4514_string(), cert.issuer.rfc4514_string(), sans, cert.not_valid_after_utc
    )
