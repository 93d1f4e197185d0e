"""Fixtures that run the tests against a real server.

The server binary is built once per session (``go build ./examples/server``
from the repository root) unless ``TS_SERVER_BIN`` names a prebuilt one.
Each server gets its own data directory and free ports, and is ready only
once a real ``/execute`` of a ``get`` succeeds.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
READY_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running server process and how to reach it."""

    proc: subprocess.Popen
    host: str
    port: int
    data: Path
    log: Path
    token: str | None = None
    scheme: str = "http"
    extra: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminates the process and waits for it; kills it when it has
        not exited within STOP_TIMEOUT."""
        if self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _probe(srv: Server, ssl_context=None) -> bool:
    """Whether a real command succeeds: /execute of a get."""
    body = json.dumps({"command": {"kind": "get", "key": "__ready_probe__"}}).encode()
    req = urllib.request.Request(srv.url + "/execute", data=body, method="POST")
    req.add_header("Content-Type", "application/json")
    if srv.token:
        req.add_header("Authorization", f"Bearer {srv.token}")
    try:
        with urllib.request.urlopen(req, timeout=2, context=ssl_context) as r:
            doc = json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return doc.get("status", {}).get("ok") is True and doc.get("response", {}).get("kind") == "bytes"


def start_server(
    binary: Path,
    root: Path,
    *args: str,
    token: str | None = None,
    scheme: str = "http",
    ssl_context=None,
    port: int | None = None,
    data: Path | None = None,
) -> Server:
    """Starts a server with its own data directory and free ports, and
    waits until it runs commands. Retries on a port lost to a race."""
    last = ""
    for _ in range(3):
        http_port = port or free_port()
        d = data or Path(tempfile.mkdtemp(prefix="data-", dir=root))
        log = root / f"server-{http_port}-{uuid.uuid4().hex[:6]}.log"
        cmd = [
            str(binary),
            "--data", str(d),
            "--resp", f"127.0.0.1:{free_port()}",
            "--http", f"127.0.0.1:{http_port}",
            "--s3", "",
            "--log-level", "warn",
            *args,
        ]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        srv = Server(proc, "127.0.0.1", http_port, d, log, token=token, scheme=scheme)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if _probe(srv, ssl_context):
                return srv
            time.sleep(0.05)
        srv.stop()
        last = srv.log_text()
        if "address already in use" not in last:
            break
    raise RuntimeError(f"server did not become ready: {' '.join(cmd)}\n{last}")


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="ts-sdk-tests-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def server_bin(workdir: Path) -> Path:
    """The server binary: TS_SERVER_BIN, or built once for the session."""
    given = os.environ.get("TS_SERVER_BIN")
    if given:
        p = Path(given)
        if not os.access(p, os.X_OK):
            pytest.fail(f"TS_SERVER_BIN={given} is not an executable")
        return p
    go = shutil.which("go")
    if go is None:
        pytest.fail("go is not on PATH: set TS_SERVER_BIN to a built examples/server binary")
    out = workdir / "tsserver"
    env = dict(os.environ, GOWORK=str(REPO / "go.work"))
    res = subprocess.run(
        [go, "build", "-o", str(out), "./examples/server"], cwd=REPO, env=env, capture_output=True, text=True
    )
    if res.returncode != 0:
        pytest.fail(f"go build ./examples/server failed:\n{res.stderr}")
    return out


@pytest.fixture(scope="session")
def server(server_bin: Path, workdir: Path) -> Iterator[Server]:
    """The shared server, without tokens."""
    srv = start_server(server_bin, workdir)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def server_url(server: Server) -> str:
    """The shared server's base URL."""
    return server.url


@pytest.fixture(scope="session")
def auth_server(server_bin: Path, workdir: Path) -> Iterator[Server]:
    """A server that needs tokens: rw-secret writes, ro-secret only reads."""
    srv = start_server(
        server_bin, workdir, "--token", "rw-secret", "--readonly-token", "ro-secret", token="rw-secret"
    )
    yield srv
    srv.stop()


@pytest.fixture
def key() -> str:
    """A key no other test uses."""
    return "t-" + uuid.uuid4().hex
