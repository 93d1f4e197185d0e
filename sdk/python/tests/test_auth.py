"""Bearer tokens against a live server started with --token and
--readonly-token."""

from __future__ import annotations

import pytest

from temporalstore import (
    AuthError,
    Client,
    ControlClient,
    FeatureClient,
    Forbidden,
    TemporalStoreError,
    Unauthorized,
)


def test_missing_or_wrong_token_is_unauthorized(auth_server, key: str) -> None:
    for token in (None, "wrong", "rw-secret-but-longer", "ro-secre", ""):
        with FeatureClient.from_url(auth_server.url, token=token) as c:
            with pytest.raises(Unauthorized) as e:
                c.get(key)
            assert e.value.code == "unauthorized" and e.value.http_status == 401
            assert isinstance(e.value, AuthError)
            with pytest.raises(Unauthorized):
                c.batch([{"kind": "get", "key": key}])
            with pytest.raises(Unauthorized):
                c.metrics()


def test_read_only_token_reads_but_cannot_write(auth_server, key: str) -> None:
    rw = FeatureClient.from_url(auth_server.url, token="rw-secret")
    ro = FeatureClient.from_url(auth_server.url, token="ro-secret")
    ro_ctl = ControlClient.from_url(auth_server.url, token="ro-secret")
    try:
        assert rw.set(key, b"v")
        assert ro.get(key) == b"v"
        assert ro.read_rows([key + "-row"], ["f"]) == [{b"f": None}]
        assert ro_ctl.count(key + "-c", 1_000) == 0
        with pytest.raises(Forbidden) as e:
            ro.set(key, b"w")
        assert e.value.code == "forbidden" and e.value.http_status == 403
        with pytest.raises(Forbidden):
            ro.write_row(key + "-row", {"f": b"1"}, event_time_ms=1)
        with pytest.raises(Forbidden):
            ro_ctl.spend(key + "-c", 1, 10, 1_000)
        # A batch holding one write is refused whole: its reads do not run
        # either, and nothing was written.
        with pytest.raises(Forbidden):
            ro.batch([{"kind": "get", "key": key}, {"kind": "set", "key": key + "-2", "value": b"x"}])
        assert rw.get(key) == b"v"
        assert rw.get(key + "-2") is None
        assert rw.read_row(key + "-row", ["f"]) == {b"f": None}
        assert "temporalstore_http_requests_total" in ro.metrics()
    finally:
        rw.close()
        ro.close()
        ro_ctl.close()


def test_health_needs_no_token(auth_server) -> None:
    with Client.from_url(auth_server.url) as c:
        assert c.health()


def test_errors_carry_the_code_in_str(auth_server, key: str) -> None:
    with FeatureClient.from_url(auth_server.url, token="nope") as c:
        with pytest.raises(TemporalStoreError) as e:
            c.get(key)
    assert str(e.value).startswith("unauthorized: ")
