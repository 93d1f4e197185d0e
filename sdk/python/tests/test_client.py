"""The raw client and the transport against a live server: bytes,
status codes, batches, keep-alive and the one-retry rule."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import temporalstore
from temporalstore import (
    BadRequest,
    Client,
    FeatureClient,
    InvalidArgument,
    NotInteger,
    TableNotFound,
    TemporalStoreError,
    TransportError,
    WrongType,
    as_bytes,
)
from temporalstore import transport as transport_mod

from conftest import free_port, start_server


@pytest.fixture
def fc(server_url: str):
    with FeatureClient.from_url(server_url) as c:
        yield c


@pytest.fixture
def raw(server_url: str):
    with Client.from_url(server_url) as c:
        yield c


ALL_BYTES = bytes(range(256))
NOT_UTF8 = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"a\x00b\xfe", b"\x80" * 3]


def test_values_round_trip_exactly(fc: FeatureClient, key: str) -> None:
    for i, v in enumerate([b"", ALL_BYTES, b"\x00", "héllo".encode(), b"\xff\xfe" * 1000]):
        k = f"{key}-{i}"
        assert fc.set(k, v)
        got = fc.get(k)
        assert got == v and type(got) is bytes
    assert fc.get(f"{key}-absent") is None
    # bytearray and memoryview are bytes too.
    assert fc.set(key, bytearray(b"\x01\x02"))
    assert fc.get(key) == b"\x01\x02"
    assert fc.set(key, memoryview(b"\x03"))
    assert fc.get(key) == b"\x03"


def test_empty_value_is_not_absent(fc: FeatureClient, key: str) -> None:
    assert fc.set(key, b"")
    assert fc.get(key) == b""
    assert fc.delete(key)
    assert fc.get(key) is None
    assert not fc.delete(key)


def test_invalid_utf8_keys_and_fields_round_trip(fc: FeatureClient, key: str) -> None:
    for i, raw_key in enumerate(NOT_UTF8):
        k = key.encode() + b"-" + raw_key
        assert fc.set(k, raw_key)
        assert fc.get(k) == raw_key
        # The same bytes as a UTF-8 string key are another key, or a
        # string that cannot be sent at all: nothing collapses to U+FFFD.
        assert fc.get(k.decode("utf-8", "replace")) is None
    hk = key.encode() + b"\xfe\xff"
    fields = {b"\xff": b"1", b"ok": b"", "é": b"\x00", b"\xc3\x28": ALL_BYTES}
    assert fc.write_row(hk, fields, event_time_ms=1)
    row = fc.read_row(hk)
    assert row.pop(b"_ts") == b"1"
    assert row == {b"\xff": b"1", b"ok": b"", "é".encode(): b"\x00", b"\xc3\x28": ALL_BYTES}
    assert fc.read_row(hk, [b"\xff", "é", b"missing"]) == {b"\xff": b"1", "é".encode(): b"\x00", b"missing": None}


def test_str_with_lone_surrogate_is_refused_locally(fc: FeatureClient) -> None:
    with pytest.raises(UnicodeEncodeError):
        fc.get("a\udcff")


def test_values_must_be_bytes(fc: FeatureClient, key: str) -> None:
    with pytest.raises(TypeError):
        fc.set(key, "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        fc.append(key, [(1.5, b"x")])  # type: ignore[list-item]


def test_raw_execute_and_bytes_in_raw_commands(raw: Client, key: str) -> None:
    r = raw.execute({"kind": "set", "key": key.encode() + b"\xff", "value": b"\x00\xff"})
    assert r == {"kind": "applied", "applied": True}
    r = raw.execute({"kind": "get", "key": key.encode() + b"\xff"})
    assert r["kind"] == "bytes"
    assert as_bytes(r["value"]) == b"\x00\xff"
    # base64 strings are the payload form too.
    raw.execute({"kind": "set", "key": key, "value": "AP8="})
    assert as_bytes(raw.execute({"kind": "get", "key": key})["value"]) == b"\x00\xff"


def test_error_codes(raw: Client, fc: FeatureClient, key: str) -> None:
    with pytest.raises(BadRequest) as e:
        raw.execute({"kind": "no_such_kind", "key": key})
    assert e.value.code == "bad_request" and e.value.http_status == 400
    assert "no_such_kind" in e.value.message
    with pytest.raises(BadRequest):
        raw.execute({"kind": "set", "key": key, "value": "!!not base64"})
    with pytest.raises(BadRequest):
        raw.execute({"kind": ""})

    fc.set(key, b"v")
    with pytest.raises(WrongType) as we:
        raw.execute({"kind": "hgetall", "key": key})
    assert we.value.code == "wrong_type" and we.value.http_status == 200
    with pytest.raises(WrongType):
        fc.history(key, 0, 10)
    with pytest.raises(NotInteger):
        raw.execute({"kind": "incr_by", "key": key, "delta": 1})
    with pytest.raises(InvalidArgument) as ie:
        raw.execute({"kind": "get"})  # an empty key
    assert ie.value.code == "invalid_argument"
    assert isinstance(ie.value, TemporalStoreError)


def test_table_not_found(server_url: str, key: str) -> None:
    with FeatureClient.from_url(server_url, namespace="nope", table="missing") as c:
        with pytest.raises(TableNotFound) as e:
            c.get(key)
    assert e.value.code == "table_not_found"


def test_batch_statuses(raw: Client, key: str) -> None:
    cmds = [
        {"kind": "set", "key": key, "value": b"1"},
        {"kind": "hget", "key": key, "args": [b"f"]},
        {"kind": "incr_by", "key": key, "delta": 2},
        {"kind": "get", "key": key},
    ]
    out = raw.batch(cmds, raise_on_error=False)
    assert out[0] == {"kind": "applied", "applied": True}
    assert isinstance(out[1], WrongType) and out[1].index == 1
    assert out[2] == {"kind": "integer", "value": 3}
    assert as_bytes(out[3]["value"]) == b"3"
    # Raising: every command ran, the first failure is raised with all.
    with pytest.raises(WrongType) as e:
        raw.batch(cmds)
    assert e.value.index == 1
    assert len(e.value.results) == 4
    assert as_bytes(e.value.results[3]["value"]) == b"3"
    assert raw.batch([]) == []


def test_batch_with_a_bad_command_runs_nothing(raw: Client, key: str) -> None:
    with pytest.raises(BadRequest) as e:
        raw.batch([{"kind": "set", "key": key, "value": b"x"}, {"kind": "bogus"}])
    assert e.value.http_status == 400
    assert as_bytes(raw.execute({"kind": "get", "key": key})["value"]) is None


def test_keep_alive_reuses_one_connection(server_url: str, server, key: str) -> None:
    c = FeatureClient.from_url(server_url)
    try:
        seen_before = _client_ports(server.port)
        c.set(key, b"x")
        sock = c.transport.current_socket()
        addr = c.transport.local_address()
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert c.transport._local.slot.conn.counter.n > 0, "the reply's bytes were not counted"
        before = _requests(c)
        for _ in range(40):
            assert c.get(key) == b"x"
        assert c.transport.current_socket() is sock, "the socket object was replaced"
        assert c.transport.local_address() == addr
        assert c.transport.connections_opened == 1
        # The server saw the 40 requests...
        assert _requests(c) - before >= 40
        # ...and, from the kernel's side, this test opened one TCP
        # connection to it (the metrics reads reuse it too).
        if seen_before is not None:
            assert _client_ports(server.port) - seen_before == {addr[1]}
    finally:
        c.close()


def _requests(c: Client) -> float:
    total = 0.0
    for line in c.metrics().splitlines():
        if line.startswith('temporalstore_http_requests_total{route="/execute",status="200"}'):
            total += float(line.split()[-1])
    return total


def _client_ports(server_port: int) -> set[int] | None:
    """Local ports of TCP connections to server_port (any state), from
    /proc/net/tcp; None where there is none."""
    p = Path("/proc/net/tcp")
    if not p.exists():
        return None
    ports = set()
    for line in p.read_text().splitlines()[1:]:
        parts = line.split()
        local, remote = parts[1], parts[2]
        if int(remote.split(":")[1], 16) == server_port and remote.split(":")[0] == "0100007F":
            ports.add(int(local.split(":")[1], 16))
    return ports


def test_threads_keep_their_own_connection(server_url: str, key: str) -> None:
    import threading

    c = FeatureClient.from_url(server_url)
    addrs = {}

    def work(i: int) -> None:
        for _ in range(5):
            c.set(f"{key}-{i}", b"v")
        addrs[i] = c.transport.local_address()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c.close()
    assert len(set(addrs.values())) == 3
    assert c.transport.connections_opened == 3
    with pytest.raises(TransportError):
        c.get(key)  # closed


def test_a_refused_connection_is_a_transport_error() -> None:
    c = Client("127.0.0.1", free_port(), timeout=2)
    with pytest.raises(TransportError) as e:
        c.execute({"kind": "get", "key": "k"})
    assert e.value.code == "transport"
    assert c.transport.connections_opened == 0


@pytest.mark.parametrize("detect_stale", [True, False])
def test_a_connection_closed_by_a_restart_is_replaced(
    server_bin, workdir, key: str, monkeypatch, detect_stale: bool
) -> None:
    """The server goes away and comes back on the same port: the kept-alive
    connection is dead. The next request reaches the new server on a new
    connection, found stale before sending, or (stale detection off) by
    the one retry after the old one closed without a byte of reply."""
    srv = start_server(server_bin, workdir)
    port, data = srv.port, srv.data
    c = FeatureClient("127.0.0.1", port)
    try:
        assert c.set(key, b"before")
        assert c.transport.connections_opened == 1
        srv.stop()
        srv = start_server(server_bin, workdir, port=port, data=data)
        if not detect_stale:
            monkeypatch.setattr(transport_mod, "_stale", lambda sock: False)
        assert c.get(key) == b"before"  # the data dir survived the restart
        assert c.transport.connections_opened == 2
    finally:
        c.close()
        srv.stop()


def test_a_dead_fresh_connection_is_not_retried(monkeypatch) -> None:
    """Only a reused connection earns the retry: a fresh one failing is
    reported, whatever the error."""
    calls = []
    real = transport_mod._HTTPConnection.connect

    def counting(self):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(self)

    monkeypatch.setattr(transport_mod._HTTPConnection, "connect", counting)
    c = Client("127.0.0.1", free_port())
    with pytest.raises(TransportError):
        c.execute({"kind": "get", "key": "k"})
    assert len(calls) == 1


def test_version_and_exports() -> None:
    assert temporalstore.__version__ == "0.1.0"
    for name in temporalstore.__all__:
        assert hasattr(temporalstore, name), name
