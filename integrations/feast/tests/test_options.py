"""The command plugin's options, durability across a SIGKILL, and the cost
of deletes beside unrelated keys."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest
from defs import T0, ek, micro, plain, row

from conftest import Server, free_port
from feast_temporalstore import _layout
from feast_temporalstore_command import history_key
from feast_temporalstore_command._store import PREFETCH_ABOVE


def test_prefetch_skips_a_stale_replay(applied):
    fs, store, cfg, views = applied("command-msgpack")
    t = store.transport(cfg)
    batch = [row(ek(driver_id=i), T0, trips=i) for i in range(100)]
    store.online_write_batch(cfg, views["stats"], batch, None)
    # Replays are all stale: the moving average climbs past the threshold.
    while store._stale_rate() <= PREFETCH_ABOVE:
        store.online_write_batch(cfg, views["stats"], batch, None)
    before = t.requests
    store.online_write_batch(cfg, views["stats"], batch, None)
    assert t.requests - before == 1, "only the timestamp read: no write is sent"
    fresh = [row(ek(driver_id=i), T0 + micro(1), trips=1000 + i) for i in range(100)]
    store.online_write_batch(cfg, views["stats"], fresh, None)
    got = plain(store.online_read(cfg, views["stats"], [ek(driver_id=i) for i in range(100)], ["trips"]))
    assert got == [(T0 + micro(1), {"trips": ("int64_val", 1000 + i)}) for i in range(100)]
    assert store._stale_rate() < PREFETCH_ABOVE, "fresh rows bring the average down"


def test_prefetch_off_sends_every_row(applied):
    fs, store, cfg, views = applied("command-msgpack", adaptive_timestamp_prefetch=False)
    batch = [row(ek(driver_id=1), T0, trips=1)]
    for _ in range(5):
        store.online_write_batch(cfg, views["stats"], batch, None)
    t = store.transport(cfg)
    before = t.requests
    store.online_write_batch(cfg, views["stats"], batch, None)
    assert t.requests - before == 1


def test_history_counts_accepted_rows(applied):
    fs, store, cfg, views = applied("command-msgpack", write_feature_history=True)
    rows = [row(ek(driver_id=1), T0 + micro(i * 1000), trips=i, note="text") for i in range(1, 11)]
    rows.append(row(ek(driver_id=1), T0, trips=999))  # stale: not recorded
    store.online_write_batch(cfg, views["stats"], rows, None)
    store.online_write_batch(cfg, views["stats"], rows[:3], None)  # all stale
    t = store.transport(cfg)
    key = history_key(cfg.project.encode(), "driver_stats", "trips", _layout.entity_key_bytes(ek(driver_id=1)))
    window = {"key": key, "start_ms": 0, "end_ms": int(T0.timestamp() * 1000) + 10**6}
    s, c = t.batch([dict(window, kind="feature_agg_query", aggregator="sum"), dict(window, kind="feature_agg_query", aggregator="count")])
    # Points are kept a millisecond apart (the series' resolution): the
    # ten accepted rows, none of the stale ones.
    assert (s["value"], c["value"]) == (55, 10)
    # Only numeric features get a series; teardown removes them.
    note = history_key(cfg.project.encode(), "driver_stats", "note", _layout.entity_key_bytes(ek(driver_id=1)))
    [n] = t.batch([dict(window, key=note, kind="feature_agg_query", aggregator="count")])
    assert n["value"] == 0
    fs.teardown()
    [c] = t.batch([dict(window, kind="feature_agg_query", aggregator="count")])
    assert c["value"] == 0


@pytest.fixture
def async_server():
    d = Path(tempfile.mkdtemp(prefix="tsfeast-async-"))
    s = Server(free_port(), free_port(), d / "data", args=("--async",))
    s.start()
    yield s
    s.stop()
    shutil.rmtree(d, ignore_errors=True)


def test_tracking_on_an_async_table(make_store, async_server, project, tmp_path):
    from defs import driver_defs

    from conftest import online_store_config

    fs = make_store(online_store_config("command-msgpack", async_server, track_keys_for_teardown=True), project)
    driver, stats, extra = driver_defs(tmp_path)
    fs.apply([driver, stats, extra])
    store, cfg, view = fs._get_provider().online_store, fs.config, fs.get_feature_view("driver_stats")
    n = 20_000
    store.online_write_batch(cfg, view, [row(ek(driver_id=i), T0, trips=i) for i in range(n)], None)
    got = store.online_read(cfg, view, [ek(driver_id=i) for i in range(n)], ["trips"])
    assert sum(1 for ts, f in got if f and f["trips"].int64_val >= 0) == n
    r = async_server.redis()
    assert sum(r.scard(k) for k in r.scan_iter(match=b"\x00ft\x00*", count=1000)) == n
    fs.teardown()
    assert [k for k in r.scan_iter(count=5000) if project.encode() in k] == []


def test_rows_survive_sigkill(make_store, project, tmp_path):
    from defs import driver_defs

    from conftest import online_store_config

    d = Path(tempfile.mkdtemp(prefix="tsfeast-kill-"))
    s = Server(free_port(), free_port(), d / "data")
    s.start()
    try:
        for kind in ("command-msgpack", "resp"):
            fs = make_store(online_store_config(kind, s), project + kind[:4])
            driver, stats, extra = driver_defs(tmp_path)
            fs.apply([driver, stats, extra])
            store, cfg, view = fs._get_provider().online_store, fs.config, fs.get_feature_view("driver_stats")
            store.online_write_batch(cfg, view, [row(ek(driver_id=i), T0 + micro(i), trips=i) for i in range(2000)], None)
        s.stop(kill=True)
        s.start()
        for kind in ("command-msgpack", "resp"):
            fs = make_store(online_store_config(kind, s), project + kind[:4])
            fs.apply(list(driver_defs(tmp_path)))
            store, cfg, view = fs._get_provider().online_store, fs.config, fs.get_feature_view("driver_stats")
            got = plain(store.online_read(cfg, view, [ek(driver_id=i) for i in range(2000)], ["trips"]))
            assert got == [(T0 + micro(i), {"trips": ("int64_val", i)}) for i in range(2000)], kind
    finally:
        s.stop()
        shutil.rmtree(d, ignore_errors=True)


def test_delete_cost_beside_other_keys(applied, server, project):
    """Teardown scans on the server (a suffix filter), so 20,000 other keys
    cost little: at most twice the time a key of an empty store. Each pair
    of runs is measured back to back, so that the machine's load weighs on
    both alike; the best pair counts (TemporalStore's Rust implementation
    took 31 times as long)."""

    def teardown_time(proj: str) -> float:
        fs, store, cfg, views = applied("command-msgpack", proj=proj)
        store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=i), T0, trips=i) for i in range(2000)], None)
        t = time.perf_counter()
        fs.teardown()
        return time.perf_counter() - t

    r = server.redis()
    fillers = [f"filler:{project}:{i}" for i in range(20_000)]
    ratios = []
    for i in range(3):
        alone = teardown_time(f"{project}a{i}")
        with r.pipeline(transaction=False) as p:
            for k in fillers:
                p.set(k, b"x")
            p.execute()
        beside = teardown_time(f"{project}b{i}")
        r.delete(*fillers)
        ratios.append(beside / alone)
    assert min(ratios) <= 2, ratios
