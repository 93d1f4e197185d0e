"""Fixtures: a live TemporalStore server (built from this repository), an
optional redis-server for the differential tests, and Feast repos wired to
either through ``online_store`` alone."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest
import redis

REPO = Path(__file__).resolve().parents[3]

# The stores under test: our two plugins (the command plugin in both
# encodings), and Feast's own Redis store on our RESP port.
PLUGINS = ["resp", "command-msgpack", "command-json"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    resp_port: int
    http_port: int
    data: Path
    proc: Optional[subprocess.Popen] = None
    args: tuple = ()
    token: Optional[str] = None
    ca_file: Optional[str] = None  # the server serves TLS, with this CA

    def start(self) -> None:
        bin_ = build_server()
        self.proc = subprocess.Popen(
            [bin_, "--data", str(self.data), "--resp", f"127.0.0.1:{self.resp_port}",
             "--http", f"127.0.0.1:{self.http_port}", "--s3", "", *self.args],
            stdout=subprocess.DEVNULL, stderr=open(self.data.parent / f"{self.data.name}.log", "ab"),
        )
        wait_ready(self)

    def stop(self, kill: bool = False) -> None:
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def redis(self, **kw) -> redis.Redis:
        if self.token:
            kw.setdefault("password", self.token)
        if self.ca_file:
            kw.setdefault("ssl", True)
            kw.setdefault("ssl_ca_certs", self.ca_file)
        return redis.Redis(host="127.0.0.1", port=self.resp_port, **kw)


_built: dict = {}


def build_server() -> str:
    """The server binary: $TS_SERVER_BIN, or built once from examples/server."""
    if os.environ.get("TS_SERVER_BIN"):
        return os.environ["TS_SERVER_BIN"]
    if "bin" not in _built:
        out = Path(tempfile.mkdtemp(prefix="tsfeast-bin-")) / "server"
        env = dict(os.environ, GOWORK=str(REPO / "go.work"))
        subprocess.run(["go", "build", "-o", str(out), "./examples/server"], cwd=REPO, env=env, check=True)
        _built["bin"] = str(out)
    return _built["bin"]


def wait_ready(s: Server, timeout: float = 30.0) -> None:
    """Until a real command answers on both ports (a health check can answer
    while data commands cannot)."""
    import http.client
    import json

    deadline = time.monotonic() + timeout
    last: Exception = RuntimeError("not started")
    while time.monotonic() < deadline:
        if s.proc is not None and s.proc.poll() is not None:
            raise RuntimeError(f"server exited with {s.proc.returncode}")
        try:
            s.redis(socket_timeout=1).get("__ready__")
            if s.ca_file:
                import ssl

                ctx = ssl.create_default_context(cafile=s.ca_file)
                c = http.client.HTTPSConnection("127.0.0.1", s.http_port, timeout=1, context=ctx)
            else:
                c = http.client.HTTPConnection("127.0.0.1", s.http_port, timeout=1)
            headers = {"Authorization": f"Bearer {s.token}"} if s.token else {}
            c.request("POST", "/execute", json.dumps({"command": {"kind": "get", "key": "__ready__"}}), headers)
            r = c.getresponse()
            body = r.read()
            if r.status == 200 and b'"ok":true' in body:
                return
            last = RuntimeError(f"HTTP {r.status}: {body[:200]!r}")
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last = e
        time.sleep(0.05)
    raise RuntimeError(f"server not ready: {last}")


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    d = Path(tempfile.mkdtemp(prefix="tsfeast-"))
    s = Server(free_port(), free_port(), d / "data")
    s.start()
    yield s
    s.stop()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[int]:
    """A real redis-server on a free port."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail("redis-server is needed for the comparisons with Feast's Redis store (make deps installs it)")
    port = free_port()
    d = tempfile.mkdtemp(prefix="tsfeast-redis-")
    p = subprocess.Popen([exe, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis(port=port).ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                p.kill()
                raise
            time.sleep(0.05)
    yield port
    p.terminate()
    p.wait(10)
    shutil.rmtree(d, ignore_errors=True)


def online_store_config(kind: str, s: Server, **opts):
    """The online_store config of a plugin kind on server s."""
    if kind == "resp":
        from feast_temporalstore import TemporalStoreOnlineStoreConfig

        return TemporalStoreOnlineStoreConfig(connection_string=f"127.0.0.1:{s.resp_port}", **opts)
    if kind.startswith("command"):
        from feast_temporalstore_command import TemporalStoreCommandOnlineStoreConfig

        enc = kind.split("-", 1)[1] if "-" in kind else "msgpack"
        return TemporalStoreCommandOnlineStoreConfig(port=s.http_port, encoding=enc, **opts)
    raise ValueError(kind)


def redis_store_config(port: int, **opts):
    from feast.infra.online_stores.redis import RedisOnlineStoreConfig

    return RedisOnlineStoreConfig(connection_string=f"127.0.0.1:{port}", **opts)


@pytest.fixture
def project() -> str:
    return "p" + uuid.uuid4().hex[:10]


@pytest.fixture
def make_store(tmp_path: Path) -> Callable:
    """make_store(online_store_config, project) -> a FeatureStore on its own
    registry in a fresh repo directory."""
    from feast import FeatureStore, RepoConfig

    n = [0]

    def make(online_store, project: str):
        n[0] += 1
        repo = tmp_path / f"repo{n[0]}"
        repo.mkdir()
        cfg = RepoConfig(
            project=project,
            provider="local",
            registry=str(repo / "registry.db"),
            online_store=online_store,
            entity_key_serialization_version=3,
            repo_path=str(repo),
        )
        return FeatureStore(config=cfg, repo_path=str(repo))

    return make


@pytest.fixture
def applied(make_store, server, project, tmp_path):
    """applied(kind, **opts) -> (FeatureStore, online store, repo config, views)
    with the driver entity and its two views applied in a fresh project."""
    from defs import driver_defs
    from feast.infra.online_stores.helpers import get_online_store_from_config

    def make(kind: str, proj: Optional[str] = None, **opts):
        cfg = redis_store_config(opts.pop("redis_port"), **opts) if kind == "redis" else online_store_config(kind, server, **opts)
        fs = make_store(cfg, proj or project)
        driver, stats, extra = driver_defs(tmp_path)
        fs.apply([driver, stats, extra])
        store = fs._get_provider().online_store
        assert type(store) is type(get_online_store_from_config(cfg))
        return fs, store, fs.config, {"stats": fs.get_feature_view("driver_stats"), "extra": fs.get_feature_view("driver_extra")}

    return make
