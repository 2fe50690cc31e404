"""Certificates and TLS: generation, inspection, client authentication, rotation under load."""

from __future__ import annotations

import base64
import datetime
import os
import socket
import ssl
import threading
import time
import warnings
from pathlib import Path

import httpx
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID
from fastapi.testclient import TestClient

from jobguard.app.certs import PEM, issue_serving, key_pem, make_ca, write_private
from jobguard.app.cli.main import main
from jobguard.app.server.app import create_app
from jobguard.app.server.tls import CertificateError, TLSManager
from tests.builders import job
from tests.reviews import review
from tests.servers import free_port, loopback_args, serving, wait_ready

pytestmark = (
    pytest.mark.slow
)  # real TLS servers on loopback: `make unit` leaves them to `make test`


def test_generate_writes_ca_and_serving_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "certs",
                "generate",
                "--service",
                "jobguard",
                "--namespace",
                "ops",
                "--out-dir",
                str(tmp_path),
                "--dev",
            ]
        )
        == 0
    )
    bundle = capsys.readouterr().out.strip()
    assert base64.b64decode(bundle) == (tmp_path / "ca.crt").read_bytes()
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [
        "jobguard",
        "jobguard.ops",
        "jobguard.ops.svc",
        "jobguard.ops.svc.cluster.local",
        "localhost",
    ]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    public = cert.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name == "secp256r1"
    assert (tmp_path / "tls.key").stat().st_mode & 0o777 == 0o600
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.crt").read_bytes())
    assert cert.issuer == ca.subject
    assert (
        main(
            ["certs", "generate", "--service", "x", "--namespace", "y", "--out-dir", str(tmp_path)]
        )
        == 2
    )


def _write_pair(
    directory: Path,
    days: int = 30,
    not_before: datetime.datetime | None = None,
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = None,
) -> int:
    ca_cert, ca_key = ca or make_ca("test-ca", 365)
    cert, key = issue_serving(
        ca_cert, ca_key, ["localhost"], ["127.0.0.1"], days, not_before=not_before
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(cert.public_bytes(PEM))
    write_private(directory / "tls.key", key_pem(key))
    return int(cert.serial_number)


def test_inspect_reports_and_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_pair(tmp_path, days=60)
    assert main(["certs", "inspect", str(tmp_path / "tls.crt")]) == 0
    out = capsys.readouterr().out
    assert "SANs:      localhost, 127.0.0.1" in out and "days left: 60" in out
    assert main(["certs", "inspect", "--warn-days", "90", str(tmp_path / "tls.crt")]) == 1
    old = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=10)
    _write_pair(tmp_path / "expired", days=2, not_before=old)
    assert main(["certs", "inspect", str(tmp_path / "expired" / "tls.crt")]) == 1
    assert "expired" in capsys.readouterr().err
    (tmp_path / "junk.pem").write_text("junk")
    assert main(["certs", "inspect", str(tmp_path / "junk.pem")]) == 2


def test_bad_new_pairs_are_rejected_and_the_old_one_kept(tmp_path: Path) -> None:
    ca = make_ca("ca", 365)
    serial = _write_pair(tmp_path, ca=ca)
    results: list[bool] = []
    manager = TLSManager(
        str(tmp_path / "tls.crt"),
        str(tmp_path / "tls.key"),
        observer=lambda ok, _: results.append(ok),
    )
    first_expiry = manager.not_after
    # garbage
    (tmp_path / "tls.crt").write_text("garbage")
    assert manager.check() is False
    # mismatched key: a certificate with somebody else's key
    other = tmp_path / "other"
    _write_pair(other, ca=ca)
    (tmp_path / "tls.crt").write_bytes((other / "tls.crt").read_bytes())
    assert manager.check(force=True) is False
    # expired
    expired = tmp_path / "expired"
    _write_pair(
        expired,
        days=2,
        ca=ca,
        not_before=datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=9),
    )
    (tmp_path / "tls.crt").write_bytes((expired / "tls.crt").read_bytes())
    write_private(tmp_path / "tls.key", (expired / "tls.key").read_bytes())
    assert manager.check() is False
    assert results == [False, False, False] and manager.failures == 3
    assert manager.not_after == first_expiry and serial
    # a good pair again
    _write_pair(tmp_path, days=90, ca=ca)
    assert manager.check() is True and manager.not_after > first_expiry
    assert results[-1] is True
    with pytest.raises(CertificateError):
        TLSManager(str(tmp_path / "missing.crt"), str(tmp_path / "tls.key"))


def test_readyz_needs_a_serving_unexpired_certificate(tmp_path: Path) -> None:
    _write_pair(tmp_path)
    manager = TLSManager(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    with TestClient(create_app(tls=manager)) as client:
        assert client.get("/readyz").status_code == 503  # not listening yet
        manager.serving = True
        assert client.get("/readyz").status_code == 200
        manager.not_after = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1)
        assert client.get("/readyz").status_code == 503
        text = client.get("/metrics").text
    assert "jobguard_certificate_expiry_seconds" in text


# --- a real server: client authentication and rotation under load ------------------------------


def _secret_mount(root: Path, cert: bytes, key: bytes, stamp: str) -> None:
    """Write a kubelet-style Secret volume update: new timestamped dir, swap ..data."""
    version = root / f"..{stamp}"
    version.mkdir()
    (version / "tls.crt").write_bytes(cert)
    write_private(version / "tls.key", key)
    tmp = root / "..data_tmp"
    tmp.symlink_to(version.name)
    os.replace(tmp, root / "..data")
    for name in ("tls.crt", "tls.key"):
        if not (root / name).is_symlink():
            (root / name).symlink_to(f"..data/{name}")


def _peer_serial(port: int, context: ssl.SSLContext) -> int:
    with (
        socket.create_connection(("127.0.0.1", port)) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return int(x509.load_der_x509_certificate(der).serial_number)


def test_rotation_under_load_loses_no_request(tmp_path: Path) -> None:
    ca_cert, ca_key = make_ca("rotation-ca", 365)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca_cert.public_bytes(PEM))
    mount = tmp_path / "secret"
    mount.mkdir()

    def new_pair() -> tuple[bytes, bytes, int]:
        cert, key = issue_serving(ca_cert, ca_key, ["localhost"], ["127.0.0.1"], 30)
        return cert.public_bytes(PEM), key_pem(key), int(cert.serial_number)

    first = new_pair()
    _secret_mount(mount, first[0], first[1], "1")
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    context = ssl.create_default_context(cafile=str(ca_file))
    body = orjson.dumps(review(job()))
    args = loopback_args(
        port, "--tls-reload-interval", "0.1", tls=(mount / "tls.crt", mount / "tls.key")
    )
    with serving(args) as proc:
        wait_ready(url, context, proc)
        assert _peer_serial(port, context) == first[2]
        failures: list[str] = []
        counts = [0, 0]
        stop = threading.Event()

        def keep_alive() -> None:
            with httpx.Client(base_url=url, verify=context, timeout=5) as http:
                while not stop.is_set():
                    try:
                        assert http.post("/validate", content=body).status_code == 200
                        counts[0] += 1
                    except Exception as exc:
                        failures.append(repr(exc))

        def new_connections() -> None:
            while not stop.is_set():
                try:
                    # A fresh client per request: a new TLS handshake every time.
                    r = httpx.post(f"{url}/validate", content=body, verify=context, timeout=5)
                    assert r.status_code == 200
                    counts[1] += 1
                except Exception as exc:
                    failures.append(repr(exc))

        threads = [
            threading.Thread(target=keep_alive),
            threading.Thread(target=new_connections),
            threading.Thread(target=new_connections),
        ]
        for t in threads:
            t.start()
        serials = [first[2]]
        for stamp in ("2", "3"):
            time.sleep(0.6)
            cert, key, serial = new_pair()
            _secret_mount(mount, cert, key, stamp)
            serials.append(serial)
            deadline = time.monotonic() + 10
            while _peer_serial(port, context) != serial:
                assert time.monotonic() < deadline, "new certificate not served"
                time.sleep(0.05)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=15)
        assert failures == []
        assert counts[0] > 0 and counts[1] > 0
        assert len(set(serials)) == 3


def test_client_certificates_are_required_with_a_client_ca(tmp_path: Path) -> None:
    ca_cert, ca_key = make_ca("server-ca", 365)
    (tmp_path / "ca.crt").write_bytes(ca_cert.public_bytes(PEM))
    _write_pair(tmp_path, ca=(ca_cert, ca_key))
    client_ca, client_ca_key = make_ca("apiserver-client-ca", 365)
    (tmp_path / "client-ca.crt").write_bytes(client_ca.public_bytes(PEM))
    client_cert, client_key = issue_serving(
        client_ca, client_ca_key, ["kube-apiserver"], [], 30, usage=ExtendedKeyUsageOID.CLIENT_AUTH
    )
    (tmp_path / "client.crt").write_bytes(client_cert.public_bytes(PEM))
    write_private(tmp_path / "client.key", key_pem(client_key))
    port = free_port()
    args = loopback_args(
        port,
        "--client-ca-file",
        str(tmp_path / "client-ca.crt"),
        tls=(tmp_path / "tls.crt", tmp_path / "tls.key"),
    )
    with serving(args) as proc:
        with_cert = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        with_cert.load_cert_chain(tmp_path / "client.crt", tmp_path / "client.key")
        wait_ready(f"https://127.0.0.1:{port}", with_cert, proc)
        without = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"https://127.0.0.1:{port}/healthz", verify=without, timeout=3)
        old_tls = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        old_tls.load_cert_chain(tmp_path / "client.crt", tmp_path / "client.key")
        try:
            with warnings.catch_warnings():  # offering TLS 1.1 on purpose
                warnings.simplefilter("ignore", DeprecationWarning)
                old_tls.maximum_version = ssl.TLSVersion.TLSv1_1
                old_tls.minimum_version = ssl.TLSVersion.TLSv1
        except (ValueError, ssl.SSLError):
            pytest.skip("this OpenSSL cannot offer TLS 1.1")
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"https://127.0.0.1:{port}/healthz", verify=old_tls, timeout=3)


def test_rotation_to_another_key_type_serves_the_new_certificate(tmp_path: Path) -> None:
    """ECDSA -> RSA: a reload must not leave the old certificate serving beside the new one."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import rsa

    ca_cert, ca_key = make_ca("ca", 365)
    _write_pair(tmp_path, ca=(ca_cert, ca_key))
    manager = TLSManager(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.UTC)
    rsa_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "rsa")]))
        .issuer_name(ca_cert.subject)
        .public_key(rsa_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=5))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (tmp_path / "tls.crt").write_bytes(rsa_cert.public_bytes(PEM))
    write_private(
        tmp_path / "tls.key",
        rsa_key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption()),
    )
    assert manager.check() is True

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve_once() -> None:
        conn, _ = listener.accept()
        with manager.context.wrap_socket(conn, server_side=True) as tls:
            tls.recv(1)

    thread = threading.Thread(target=serve_once)
    thread.start()
    client = ssl.create_default_context(cafile=None)
    client.load_verify_locations(cadata=ca_cert.public_bytes(PEM).decode())
    with (
        socket.create_connection(listener.getsockname()) as raw,
        client.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
        tls.send(b"x")
    thread.join(timeout=10)
    listener.close()
    assert der is not None
    assert x509.load_der_x509_certificate(der).serial_number == rsa_cert.serial_number
