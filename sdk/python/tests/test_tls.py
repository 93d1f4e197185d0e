"""TLS: the client against a server with a self-signed certificate."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from temporalstore import FeatureClient, TransportError

from conftest import start_server


@pytest.fixture(scope="module")
def tls_server(server_bin, workdir: Path):
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is needed to make a test certificate (make deps installs it)")
    cert, keyf = workdir / "cert.pem", workdir / "key.pem"
    res = subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(keyf), "-out", str(cert),
        ],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        pytest.fail(f"openssl req failed: {res.stderr}")
    ctx = ssl.create_default_context(cafile=str(cert))
    srv = start_server(
        server_bin, workdir, "--tls-cert", str(cert), "--tls-key", str(keyf), scheme="https", ssl_context=ctx
    )
    srv.extra["cert"] = str(cert)
    yield srv
    srv.stop()


def test_tls_with_a_ca_file(tls_server, key: str) -> None:
    with FeatureClient("127.0.0.1", tls_server.port, ca_file=tls_server.extra["cert"]) as c:
        assert c.transport.tls
        assert c.set(key, b"\x00secret\xff")
        assert c.get(key) == b"\x00secret\xff"
        for _ in range(5):
            c.get(key)
        assert c.transport.connections_opened == 1


def test_tls_with_a_context(tls_server, key: str) -> None:
    ctx = ssl.create_default_context(cafile=tls_server.extra["cert"])
    with FeatureClient.from_url(tls_server.url, tls=ctx) as c:
        assert c.get(key) is None


def test_tls_refuses_an_untrusted_certificate(tls_server, key: str) -> None:
    with FeatureClient("127.0.0.1", tls_server.port, tls=True) as c:
        with pytest.raises(TransportError) as e:
            c.get(key)
    assert "CERTIFICATE_VERIFY_FAILED" in str(e.value) or "certificate" in str(e.value).lower()


def test_plain_http_to_a_tls_port_fails(tls_server, key: str) -> None:
    with FeatureClient("127.0.0.1", tls_server.port) as c:
        with pytest.raises(Exception) as e:
            c.get(key)
    assert e.type.__module__.startswith("temporalstore")
