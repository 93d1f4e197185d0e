"""Tokens and TLS through both plugins, and the plugins reading each
other's rows."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from defs import T0, driver_defs, ek, plain, row

from conftest import PLUGINS, Server, free_port, online_store_config


@pytest.fixture(scope="module")
def secured():
    """A server with a read-write token and TLS on both ports."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is needed to make a test certificate (make deps installs it)")
    d = Path(tempfile.mkdtemp(prefix="tsfeast-tls-"))
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    s = Server(free_port(), free_port(), d / "data", token="s3cret", ca_file=str(cert),
               args=("--token", "s3cret", "--tls-cert", str(cert), "--tls-key", str(key)))
    s.start()
    yield s
    s.stop()
    shutil.rmtree(d, ignore_errors=True)


def _opts(kind: str, s: Server, token: bool) -> dict:
    if kind == "resp":
        cs = f"127.0.0.1:{s.resp_port},ssl=true,ssl_ca_certs={s.ca_file}"
        return {"connection_string": cs + (f",password={s.token}" if token else "")}
    return {"tls": True, "tls_ca_file": s.ca_file, **({"token": s.token} if token else {})}


@pytest.mark.parametrize("kind", PLUGINS)
def test_token_and_tls(make_store, secured, project, tmp_path, kind):
    from conftest import online_store_config as osc

    def store(token: bool, proj: str):
        cfg = osc(kind, secured)
        cfg = type(cfg)(**{**cfg.model_dump(), **_opts(kind, secured, token)})
        fs = make_store(cfg, proj)
        fs.apply(list(driver_defs(tmp_path)))
        return fs, fs._get_provider().online_store, fs.config, fs.get_feature_view("driver_stats")

    fs, st, cfg, view = store(True, project)
    st.online_write_batch(cfg, view, [row(ek(driver_id=1), T0, trips=7)], None)
    assert plain(st.online_read(cfg, view, [ek(driver_id=1)], ["trips"])) == [(T0, {"trips": ("int64_val", 7)})]
    fs.teardown()
    _, st2, cfg2, view2 = store(False, project + "x")
    with pytest.raises(Exception) as e:
        st2.online_read(cfg2, view2, [ek(driver_id=1)], ["trips"])
    assert "auth" in str(e.value).lower() or "unauthorized" in str(e.value).lower() or "NOAUTH" in str(e.value)


def test_plugins_read_each_others_rows(make_store, server, project, tmp_path):
    stores = {}
    for kind in PLUGINS:
        fs = make_store(online_store_config(kind, server), project)
        fs.apply(list(driver_defs(tmp_path)))
        stores[kind] = (fs._get_provider().online_store, fs.config, fs.get_feature_view("driver_stats"))
    for i, kind in enumerate(PLUGINS):
        st, cfg, view = stores[kind]
        st.online_write_batch(cfg, view, [row(ek(driver_id=i), T0, trips=i, note=kind)], None)
    keys = [ek(driver_id=i) for i in range(len(PLUGINS))]
    want = [(T0, {"note": ("string_val", k), "trips": ("int64_val", i)}) for i, k in enumerate(PLUGINS)]
    for kind in PLUGINS:
        st, cfg, view = stores[kind]
        assert plain(st.online_read(cfg, view, keys, ["trips", "note"])) == want, kind
