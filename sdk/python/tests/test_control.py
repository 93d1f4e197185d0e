"""ControlClient against a live server: counters, families with request
ids, caps, quotas, the budget gate, pacing, selections and views."""

from __future__ import annotations

import time

import pytest

from temporalstore import ControlClient, InvalidArgument, PaceResult, QuotaResult, WrongType, now_ms

T0 = 1_000_000  # explicit times keep windows deterministic


@pytest.fixture
def cc(server_url: str):
    with ControlClient.from_url(server_url) as c:
        yield c


def test_incr_count_query_detail(cc: ControlClient, key: str) -> None:
    cc.incr(key, 2, at=1_500, precision_ms=1_000)
    cc.incr(key, 3, at=1_999, precision_ms=1_000)
    cc.incr(key, -1, at=5_000)
    cc.incr(key, at=9_000)  # delta 1
    assert cc.count(key, 10_000, at=9_999) == 5
    assert cc.count(key, 4_000, at=5_000) == -1  # 1_001..5_000: the 1_000 bucket is out
    assert cc.count(key, 4_000, at=4_999) == 5  # 1_000..4_999: 5_000 is not yet in
    assert cc.query(key, 0, 10_000) == 5
    assert cc.query(key, 0, 10_000, "events") == 3
    assert cc.query(key, 0, 10_000, "max") == 5
    assert cc.query(key, 0, 10_000, "min") == -1
    assert cc.query(key, 0, 10_000, "last") == 1
    assert cc.detail(key, 0, 10_000) == [(1_000, 5), (5_000, -1), (9_000, 1)]
    assert cc.detail(key, 0, 10_000, limit=1) == [(1_000, 5)]
    with pytest.raises(InvalidArgument):
        cc.query(key, 0, 10, "p99")
    with pytest.raises(InvalidArgument):
        cc.incr(key, 1, at=-5)


def test_incr_defaults_to_now_and_ttl_slides(cc: ControlClient, key: str) -> None:
    cc.incr(key, 4, ttl_ms=60_000)
    assert cc.count(key, 60_000) == 4
    assert 0 < cc.execute({"kind": "pttl", "key": key})["value"] <= 60_000
    assert cc.execute({"kind": "type", "key": key})["value"] == "controlstate"


def test_distinct_values(cc: ControlClient, key: str) -> None:
    for v in [b"a", b"b", b"a", b"\xff"]:
        cc.add_distinct(key, v, at=1_200, precision_ms=1_000)
    cc.add_distinct(key, b"c", at=7_000)
    assert cc.query(key, 0, 5_000, "change") == 3
    assert cc.query(key, 0, 10_000, "change") == 4


def test_add_and_count_counts_a_retried_request_once(cc: ControlClient, key: str) -> None:
    assert cc.add_and_count(key, 10_000, 5, at=T0, request_id="r1") == 5
    assert cc.add_and_count(key, 10_000, 3, at=T0 + 1, request_id="r2") == 8
    # The retry of r1 adds nothing and answers the current total of its
    # window, which ends at T0 (r2 at T0 + 1 is after it).
    assert cc.add_and_count(key, 10_000, 5, at=T0, request_id="r1") == 5
    assert cc.add_and_count(key, 10_000, 3, at=T0 + 1, request_id="r2") == 8
    assert cc.family_count(key, 10_000, at=T0 + 1) == 8
    assert cc.family_query(key, 0, T0 + 10, aggregator="events") == 2
    # Without an id every call counts.
    assert cc.add_and_count(key, 10_000, 1, at=T0 + 2) == 9
    assert cc.add_and_count(key, 10_000, 1, at=T0 + 2) == 10
    assert cc.add_and_count(key, None, 1, at=T0 + 2) == 0  # add only
    assert cc.family_count(key, 10_000, at=T0 + 2) == 11
    # The family's state is not the raw key's.
    assert cc.count(key, 10_000, at=T0 + 2) == 0
    with pytest.raises(InvalidArgument):
        cc.add_and_count(key, 10, family="nope")


def test_cap_checks_and_records_in_one_call(cc: ControlClient, key: str) -> None:
    results = [cc.cap(key, 3, 60_000, at=T0 + i) for i in range(5)]
    assert [r.allowed for r in results] == [True, True, True, False, False]
    assert [r.used for r in results] == [1, 2, 3, 3, 3]
    assert results[3].retry_after_ms == 60_000 - 3  # the first event ages out at T0 + 60_000
    assert isinstance(results[0], QuotaResult) and bool(results[0]) and not results[3]
    assert cc.count(key, 60_000, at=T0 + 10) == 3, "refused events are not recorded"
    assert cc.cap(key, 3, 60_000, at=T0 + 60_000).allowed


def test_take_quota_and_retry_after(cc: ControlClient, key: str) -> None:
    r = cc.take(key, 2, 3, 10_000, at=T0)
    assert r == QuotaResult(True, 2, 0)
    r = cc.take(key, 2, 3, 10_000, at=T0 + 4_000)
    assert r == QuotaResult(False, 2, 6_000)
    assert r.retry_after == 6.0
    assert cc.take(key, 1, 3, 10_000, at=T0 + 4_000) == QuotaResult(True, 3, 0)
    # Waiting retry_after (from T0 + 4_000) lets the first take age out.
    assert cc.take(key, 2, 3, 10_000, at=T0 + 10_000) == QuotaResult(True, 3, 0)
    # More than the limit itself never fits: refused, and no wait helps.
    assert cc.take(key + "-big", 5, 3, 10_000, at=T0) == QuotaResult(False, 0, 0)
    with pytest.raises(InvalidArgument):
        cc.take(key, 1, 3, 0)  # no window
    with pytest.raises(InvalidArgument):
        cc.take(key, -1, 3, 10_000)
    with pytest.raises(TypeError):
        cc.take(key, 1.5, 3, 10_000)  # type: ignore[arg-type]


def test_budget_gate_never_records_a_rejected_spend(cc: ControlClient, key: str) -> None:
    day = 86_400_000
    assert cc.spend(key, 600, 1_000, day, at=T0).allowed
    assert cc.count(key, day, at=T0 + 1) == 600
    rejected = cc.spend(key, 500, 1_000, day, at=T0 + 1)
    assert not rejected.allowed and rejected.used == 600
    assert rejected.retry_after_ms == day - 1
    assert cc.count(key, day, at=T0 + 1) == 600, "the rejected spend was recorded"
    assert cc.debug(key) == {str(T0).encode(): b"600"}
    # What still fits is accepted, up to the budget exactly.
    assert cc.spend(key, 400, 1_000, day, at=T0 + 2) == QuotaResult(True, 1_000, 0)
    assert not cc.spend(key, 1, 1_000, day, at=T0 + 3).allowed
    assert cc.spend(key, 0, 1_000, day, at=T0 + 3).allowed
    assert cc.count(key, day, at=T0 + 3) == 1_000


def test_a_retried_spend_counts_once(cc: ControlClient, key: str) -> None:
    day = 86_400_000
    assert cc.spend(key, 600, 1_000, day, at=T0, request_id="order-1").allowed
    again = cc.spend(key, 600, 1_000, day, at=T0, request_id="order-1")
    assert again.allowed and again.used == 600, "the retry was counted again"
    assert not cc.spend(key, 500, 1_000, day, at=T0 + 1, request_id="order-2").allowed
    assert cc.spend(key, 400, 1_000, day, at=T0 + 2, request_id="order-3").allowed
    assert cc.count(key, day, at=T0 + 2) == 1_000


def test_take_shares_state_with_incr(cc: ControlClient, key: str) -> None:
    cc.incr(key, 9, at=T0)
    assert not cc.take(key, 2, 10, 1_000, at=T0 + 1).allowed
    assert cc.take(key, 1, 10, 1_000, at=T0 + 1).allowed


def test_pace(cc: ControlClient, key: str) -> None:
    assert cc.pace(key, 2, 1_000) == PaceResult(True, 0)
    r = cc.pace(key, 2, 1_000)
    assert not r.allowed and 0 < r.retry_after_ms <= 500
    time.sleep(r.retry_after + 0.02)
    assert cc.pace(key, 2, 1_000).allowed
    burst = key + "-burst"
    assert [cc.pace(burst, 2, 1_000, burst=2).allowed for _ in range(3)] == [True, True, False]
    with pytest.raises(InvalidArgument):
        cc.pace(key, 0, 1_000)


def test_selection_first_and_last(cc: ControlClient, key: str) -> None:
    cc.select(key, b"b", at=20)
    cc.select(key, b"a", at=10)
    cc.select(key, b"c", at=30)
    assert cc.selection(key) == b"a"
    last = key + "-last"
    cc.select(last, b"x", at=100, last=True)
    cc.select(last, b"\xff\x00", at=200, last=True)
    cc.select(last, b"y", at=150, last=True)
    assert cc.selection(last) == b"\xff\x00"
    assert cc.selection(key + "-none") is None
    cc.select(key + "-now", b"")
    assert cc.selection(key + "-now") == b""


def test_manager_and_debug_views(cc: ControlClient, key: str) -> None:
    cc.add_and_count(key, None, 4, at=2_000)
    cc.add_and_count(key, None, 7, at=3_000)
    cc.select(key, b"sel", at=5)
    summary = cc.manager(key)
    assert summary[b"h_events"] == b"2" and summary[b"h_sum"] == b"11"
    assert summary[b"fol_value"] == b"sel" and summary[b"fol_type"] == b"first"
    assert cc.manager(key, op=7) == {b"2000": b"4", b"3000": b"7"}
    assert cc.manager(key, op=5) == {b"key_list": b"2000,3000"}
    assert cc.manager(key, op=6, start_ms=2_500, end_ms=4_000) == {b"size": b"1"}
    assert cc.manager(key, op=2, timestamps=[2_000, 99]) == {b"2000": b"4", b"99": b"0"}
    cc.incr(key, 3, at=1_000)
    cc.add_distinct(key, b"v", at=1_000)
    d = cc.debug(key)
    assert d[b"1000"] == b"3" and d[b"change:1000"] == b"1" and d[b"selection"] == b"sel"
    assert cc.debug(key, 2_000, 3_000) == {b"selection": b"sel", b"selection_occur_time_ms": b"5", b"selection_type": b"first"}


def test_control_on_a_string_key_is_wrong_type(cc: ControlClient, key: str) -> None:
    cc.execute({"kind": "set", "key": key, "value": b"x"})
    with pytest.raises(WrongType):
        cc.incr(key)
    with pytest.raises(WrongType):
        cc.spend(key, 1, 10, 1_000)


def test_now_ms_is_the_clock() -> None:
    assert abs(now_ms() - time.time() * 1000) < 1_000
