"""FeatureClient against a live server: event-time rows, batched reads,
history series and their aggregates."""

from __future__ import annotations

import datetime as dt

import pytest

from temporalstore import FeatureClient, InvalidArgument, Row, WrongType, window


@pytest.fixture
def fc(server_url: str):
    with FeatureClient.from_url(server_url) as c:
        yield c


def test_set_conditions_and_ttl(fc: FeatureClient, key: str) -> None:
    assert fc.set(key, b"1", nx=True)
    assert not fc.set(key, b"2", nx=True)
    assert fc.get(key) == b"1"
    assert fc.set(key, b"3", xx=True)
    assert not fc.set(key + "-none", b"3", xx=True)
    assert fc.get(key + "-none") is None
    assert fc.set(key, b"4", ttl_ms=60_000)
    pttl = fc.execute({"kind": "pttl", "key": key})["value"]
    assert 0 < pttl <= 60_000
    with pytest.raises(ValueError):
        fc.set(key, b"x", nx=True, xx=True)


def test_row_write_skips_older_and_equal_event_times(fc: FeatureClient, key: str) -> None:
    assert fc.write_row(key, {"clicks": b"3"}, event_time_ms=2_000)
    assert not fc.write_row(key, {"clicks": b"2"}, event_time_ms=2_000), "equal is stale"
    assert not fc.write_row(key, {"clicks": b"1", "new": b"x"}, event_time_ms=1_999), "older is stale"
    assert fc.read_row(key, ["clicks", "new"]) == {b"clicks": b"3", b"new": None}
    assert fc.write_row(key, {"clicks": b"4"}, event_time_ms=2_001)
    assert fc.read_row(key) == {b"clicks": b"4", b"_ts": b"2001"}


def test_row_write_ms_precision_loses_sub_millisecond_order(fc: FeatureClient, key: str) -> None:
    base = 1_700_000_000_000_000_000
    assert fc.write_row(key, {"f": b"a"}, event_time_ns=base)
    # Stored as ms, 1 µs later is the same millisecond: stale.
    assert not fc.write_row(key, {"f": b"b"}, event_time_ns=base + 1_000)
    assert fc.read_row(key, ["f"]) == {b"f": b"a"}


def test_row_write_ns_orders_by_the_microsecond(fc: FeatureClient, key: str) -> None:
    base = 1_700_000_000_123_456_000
    assert fc.write_row(key, {"f": b"a"}, event_time_ns=base, ts_format="ns", ts_field="_ts:ns")
    assert not fc.write_row(key, {"f": b"b"}, event_time_ns=base, ts_format="ns", ts_field="_ts:ns")
    assert not fc.write_row(key, {"f": b"c"}, event_time_ns=base - 1_000, ts_format="ns", ts_field="_ts:ns")
    assert fc.write_row(key, {"f": b"d"}, event_time_ns=base + 1_000, ts_format="ns", ts_field="_ts:ns")
    assert fc.read_row(key) == {b"f": b"d", b"_ts:ns": str(base + 1_000).encode()}


def test_row_write_proto_timestamps_from_datetimes(fc: FeatureClient, key: str) -> None:
    t = dt.datetime(2025, 6, 1, 12, 0, 0, 5, tzinfo=dt.timezone.utc)
    assert fc.write_row(key, {"f": b"1"}, event_time=t, ts_format="proto")
    assert not fc.write_row(key, {"f": b"2"}, event_time=t, ts_format="proto")
    assert fc.write_row(key, {"f": b"3"}, event_time=t + dt.timedelta(microseconds=1), ts_format="proto")
    row = fc.read_row(key)
    assert row[b"f"] == b"3"
    # A protobuf Timestamp: field 1 seconds, field 2 nanos (varints).
    secs = int((t - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds())
    assert row[b"_ts"] == b"\x08" + _uvarint(secs) + b"\x10" + _uvarint(6_000)
    with pytest.raises(ValueError):
        fc.write_row(key, {"f": b"x"}, event_time=dt.datetime(2025, 1, 1))  # naive
    with pytest.raises(ValueError):
        fc.write_row(key, {"f": b"x"}, event_time_ms=1, event_time_ns=1)


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def test_row_write_ttl_and_format_errors(fc: FeatureClient, key: str) -> None:
    assert fc.write_row(key, {"f": b"1"}, event_time_ms=5, ttl_ms=30_000)
    assert 0 < fc.execute({"kind": "pttl", "key": key})["value"] <= 30_000
    with pytest.raises(InvalidArgument):
        fc.write_row(key, {"f": b"1"}, event_time_ms=6, ts_format="weeks")
    with pytest.raises(InvalidArgument) as e:
        # The stored ms time is not a protobuf Timestamp.
        fc.write_row(key, {"f": b"1"}, event_time_ms=7, ts_format="proto")
    assert "malformed event time" in e.value.message
    fc.set(key + "-s", b"x")
    with pytest.raises(WrongType):
        fc.write_row(key + "-s", {"f": b"1"}, event_time_ms=1)


def test_write_rows_applies_in_order_and_reports_each(fc: FeatureClient, key: str) -> None:
    a, b = key + "-a", key + "-b"
    fc.write_row(b, {"f": b"old"}, event_time_ms=100)
    applied = fc.write_rows(
        [
            Row(a, {"f": b"1"}, event_time_ms=10),
            Row(a, {"f": b"2"}, event_time_ms=9),  # older than the row before it
            Row(a, {"f": b"3"}, event_time_ms=11),
            Row(b, {"f": b"stale"}, event_time_ms=100),
            Row(b, {"f": b"ns"}, event_time_ns=100_000_001),
        ]
    )
    assert applied == [True, False, True, False, False]  # ms format: 100.000001 ms is 100 ms
    assert fc.read_rows([a, b], ["f"]) == [{b"f": b"3"}, {b"f": b"old"}]
    assert fc.write_rows([]) == []


def test_read_rows_is_one_batch(fc: FeatureClient, key: str) -> None:
    keys = [f"{key}-{i}" for i in range(25)]
    fc.write_rows([Row(k, {"n": str(i).encode(), "sq": str(i * i).encode()}, event_time_ms=1) for i, k in enumerate(keys)])
    before = _batches(fc)
    rows = fc.read_rows(keys + [key + "-missing"], ["sq", "n"])
    assert _batches(fc) - before == 1
    assert rows[:25] == [{b"sq": str(i * i).encode(), b"n": str(i).encode()} for i in range(25)]
    assert rows[25] == {b"sq": None, b"n": None}
    full = fc.read_rows([keys[3], key + "-missing"])
    assert full == [{b"n": b"3", b"sq": b"9", b"_ts": b"1"}, {}]
    # Past max_batch the reads split, in order.
    assert fc.read_rows(keys[:5], ["n"], max_batch=2) == [{b"n": str(i).encode()} for i in range(5)]


def _batches(fc: FeatureClient) -> float:
    for line in fc.metrics().splitlines():
        if line.startswith('temporalstore_http_requests_total{route="/batch_execute",status="200"}'):
            return float(line.split()[-1])
    return 0.0


def test_history_append_policies_and_windows(fc: FeatureClient, key: str) -> None:
    assert fc.append(key, {1_000: b"10", 2_000: b"20", 3_000: b"3"})
    assert not fc.append(key, [(1_000, b"99")], policy="insert_if_absent")
    assert not fc.append(key, [(5_000, b"99")], policy="replace_existing")
    assert fc.append(key, [(3_000, b"30")], policy="replace_existing")
    assert fc.append(key, [(4_000, b"\xff\x00")], policy="insert_if_absent")
    assert fc.history(key, 0, 10_000) == [(1_000, b"10"), (2_000, b"20"), (3_000, b"30"), (4_000, b"\xff\x00")]
    assert fc.history(key, 2_000, 3_000) == [(2_000, b"20"), (3_000, b"30")]
    assert fc.history(key, 0, 10_000, limit=2) == [(1_000, b"10"), (2_000, b"20")]
    assert fc.history(key, 5_000, 9_000) == []
    assert fc.history(key + "-none", 0, 10) == []
    with pytest.raises(InvalidArgument):
        fc.append(key, [(1, b"x")], policy="block")
    assert fc.delete_series(key)
    assert not fc.delete_series(key)
    assert fc.history(key, 0, 10_000) == []


def test_history_aggregates(fc: FeatureClient, key: str) -> None:
    fc.append(key, [(t, str(v).encode()) for t, v in [(1_000, 7), (2_000, -2), (3_000, 10), (4_000, 5)]])
    fc.append(key, [(5_000, b"not a number")])
    want = {"sum": 20, "count": 5, "avg": 5, "min": -2, "max": 10, "first": 7, "last": 0}
    for agg, v in want.items():
        assert fc.aggregate(key, 0, 10_000, agg) == v, agg
    assert fc.aggregate(key, 2_000, 4_000, "last") == 5
    assert fc.aggregate(key, 2_000, 3_000, "sum") == 8
    assert fc.aggregate(key, 0, 10_000, "sum", limit=2) == 5
    assert fc.aggregate(key, 20_000, 30_000, "max") == 0
    got = fc.aggregates(key, 0, 4_000, ["sum", "count", "avgf", "maxf", "distinct", "top:1"])
    assert got["sum"] == 20 and got["count"] == 4 and got["distinct"] == 4
    assert got["avgf"] == pytest.approx(5.0) and isinstance(got["avgf"], float)
    assert got["maxf"] == pytest.approx(10.0)
    assert len(got["top:1"]) == 1 and got["top:1"][0][1] == 1
    assert fc.aggregate(key, 0, 4_000, "p50") == pytest.approx(5.0, rel=0.05)
    assert fc.aggregates(key, 0, 1, []) == {}
    with pytest.raises(InvalidArgument):
        fc.aggregate(key, 0, 10_000, "median")


def test_window_helper() -> None:
    assert window(1_000, at_ms=5_000) == (4_001, 5_000)
    start, end = window(60_000)
    assert end - start == 59_999
