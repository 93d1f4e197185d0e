"""Both plugins through Feast 0.67 against a live server: round trips,
staleness as Feast's Redis store judges it, TTL, binary safety, interop with
Feast's own Redis store, update and teardown."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pandas as pd
import pytest
from defs import T0, ek, micro, plain, row
from feast.protos.feast.types.Value_pb2 import Value

from conftest import PLUGINS, online_store_config, redis_store_config
from feast_temporalstore import _layout

FEATURES = ["driver_stats:conv_rate", "driver_stats:trips", "driver_stats:note", "driver_stats:blob"]


@pytest.mark.parametrize("kind", PLUGINS)
def test_round_trip(applied, kind):
    fs, store, cfg, views = applied(kind)
    df = pd.DataFrame({
        "driver_id": [2, 1, 2, 3],  # unsorted, with a duplicate (the newer wins)
        "conv_rate": [0.2, 0.1, 0.25, 0.3],
        "trips": [20, 10, 25, 30],
        "note": ["two", "one", "two'", None],
        "blob": [b"\x00\xff", b"", b"\x01", None],
        "event_timestamp": [T0, T0, T0 + micro(1), T0],
    })
    fs.write_to_online_store("driver_stats", df)
    got = fs.get_online_features(features=FEATURES, entity_rows=[{"driver_id": i} for i in (1, 2, 3, 4)]).to_dict()
    assert got["conv_rate"] == [0.1, 0.25, 0.3, None]
    assert got["trips"] == [10, 25, 30, None]
    assert got["note"] == ["one", "two'", None, None]
    assert got["blob"] == [b"", b"\x01", None, None]

    resp = fs.get_online_features(features=FEATURES, entity_rows=[{"driver_id": 3}, {"driver_id": 4}]).proto
    # A null is PRESENT and empty; a missing entity is NOT_FOUND (Feast's
    # Redis store says PRESENT for it).
    statuses = [list(r.statuses) for r in resp.results]
    note = resp.metadata.feature_names.val[:].index("note")
    assert statuses[note] == [1, 3]
    ts = resp.results[note].event_timestamps
    assert ts[0].seconds == int(T0.timestamp()) and ts[1].seconds == 0

    read = store.online_read(cfg, views["stats"], [ek(driver_id=2)], ["trips"])
    assert plain(read) == [(T0 + micro(1), {"trips": ("int64_val", 25)})]


@pytest.mark.parametrize("kind", PLUGINS)
def test_string_composite_and_entityless_keys(applied, make_store, server, project, tmp_path, kind):
    from feast import Entity, FeatureView, Field, ValueType
    from feast.types import Int64

    from defs import source

    fs = make_store(online_store_config(kind, server), project)
    user = Entity(name="user", join_keys=["user_id"], value_type=ValueType.STRING)
    shop = Entity(name="shop", join_keys=["shop_id"], value_type=ValueType.INT64)
    by_user = FeatureView(name="by_user", entities=[user], source=source(tmp_path), schema=[Field(name="n", dtype=Int64)])
    pair = FeatureView(name="pair", entities=[user, shop], source=source(tmp_path), schema=[Field(name="m", dtype=Int64)])
    glob = FeatureView(name="glob", entities=[], source=source(tmp_path), schema=[Field(name="g", dtype=Int64)])
    fs.apply([user, shop, by_user, pair, glob])
    fs.write_to_online_store("by_user", pd.DataFrame({"user_id": ["ü", "*"], "n": [1, 2], "event_timestamp": [T0, T0]}))
    fs.write_to_online_store("pair", pd.DataFrame({"user_id": ["ü"], "shop_id": [7], "m": [3], "event_timestamp": [T0]}))
    # write_to_online_store writes an entityless view's rows under an empty
    # entity key, which Feast's reads (under __dummy_id="") never find, on
    # its own Redis store too; materialize and the store API use the dummy.
    store = fs._get_provider().online_store
    store.online_write_batch(fs.config, fs.get_feature_view("glob"), [row(ek(__dummy_id=""), T0, g=9)], None)
    got = fs.get_online_features(features=["by_user:n", "pair:m", "glob:g"],
                                 entity_rows=[{"user_id": "ü", "shop_id": 7}, {"user_id": "*", "shop_id": 7}]).to_dict()
    assert got["n"] == [1, 2] and got["m"] == [3, None] and got["g"] == [9, 9]


@pytest.mark.parametrize("kind", ["command-msgpack", "command-json"])
def test_one_request_for_all_views(applied, kind):
    fs, store, cfg, _ = applied(kind)
    fs.write_to_online_store("driver_stats", pd.DataFrame({"driver_id": [1], "conv_rate": [0.1], "trips": [1], "note": ["x"], "blob": [b""], "event_timestamp": [T0]}))
    fs.write_to_online_store("driver_extra", pd.DataFrame({"driver_id": [1], "rating": [5], "event_timestamp": [T0]}))
    fs.get_online_features(features=FEATURES + ["driver_extra:rating"], entity_rows=[{"driver_id": 1}])  # warm-up
    t = store.transport(cfg)
    before = t.requests
    got = fs.get_online_features(features=FEATURES + ["driver_extra:rating"], entity_rows=[{"driver_id": 1}, {"driver_id": 2}]).to_dict()
    assert got["rating"] == [5, None]
    assert t.requests - before == 1


def test_resp_one_pipeline_for_all_views(applied, monkeypatch):
    fs, store, cfg, _ = applied("resp")
    fs.write_to_online_store("driver_extra", pd.DataFrame({"driver_id": [1], "rating": [5], "event_timestamp": [T0]}))
    client = store.client(cfg)
    calls = []
    real = client.pipeline

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(client, "pipeline", counted)
    got = fs.get_online_features(features=FEATURES + ["driver_extra:rating"], entity_rows=[{"driver_id": 1}]).to_dict()
    assert got["rating"] == [5] and len(calls) == 1


# Staleness: the same cases through Feast's Redis store on a real
# redis-server and through each plugin must leave the same rows.
STALE_CASES = [
    ("newer applies", [[(1, T0, 1)], [(1, T0 + timedelta(seconds=1), 2)]]),
    ("equal is stale", [[(1, T0, 1)], [(1, T0, 2)]]),
    ("older is stale", [[(1, T0, 1)], [(1, T0 - timedelta(seconds=1), 2)]]),
    ("t+5 then t+3 in one batch keeps t+5", [[(1, T0 + timedelta(seconds=5), 5), (1, T0 + timedelta(seconds=3), 3)]]),
    ("1 µs newer applies", [[(1, T0, 1)], [(1, T0 + micro(1), 2)]]),
    ("equal within a batch", [[(1, T0, 1), (1, T0, 2)]]),
    ("several entities", [[(1, T0, 1), (2, T0, 2), (1, T0 + micro(3), 3), (2, T0 - micro(1), 4)], [(2, T0 + micro(1), 5)]]),
]


def _apply_case(store, cfg, view, batches):
    for batch in batches:
        store.online_write_batch(cfg, view, [row(ek(driver_id=d), at, trips=v) for d, at, v in batch], None)
    return plain(store.online_read(cfg, view, [ek(driver_id=1), ek(driver_id=2)], ["trips"]))


@pytest.mark.parametrize("kind", PLUGINS)
@pytest.mark.parametrize("name,batches", STALE_CASES, ids=[c[0] for c in STALE_CASES])
def test_staleness_as_feast_redis(applied, redis_server, project, kind, name, batches):
    _, ref_store, ref_cfg, ref_views = applied("redis", proj=project + "r", redis_port=redis_server)
    want = _apply_case(ref_store, ref_cfg, ref_views["stats"], batches)
    _, store, cfg, views = applied(kind)
    got = _apply_case(store, cfg, views["stats"], batches)
    # Feast's Redis store reads a missing entity as PRESENT at the epoch;
    # ours says NOT_FOUND. Everything else must agree.
    want = [None if w is not None and w[0].timestamp() == 0 else w for w in want]
    assert got == want


@pytest.mark.parametrize("kind", PLUGINS)
def test_ttl(applied, server, kind):
    fs, store, cfg, views = applied(kind, key_ttl_seconds=2)
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=1), T0, trips=1)], None)
    key = _layout.row_key(cfg.project, ek(driver_id=1))
    r = server.redis()
    assert 1000 < r.pttl(key) <= 2000
    time.sleep(0.6)
    left = r.pttl(key)
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=1), T0, trips=2)], None)
    assert r.pttl(key) <= left, "a stale write does not renew the TTL"
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=1), T0 + micro(1), trips=3)], None)
    assert r.pttl(key) > left, "a fresh write renews it"
    time.sleep(2.2)
    assert plain(store.online_read(cfg, views["stats"], [ek(driver_id=1)], ["trips"])) == [None]


@pytest.mark.parametrize("kind", PLUGINS)
def test_fields_are_feast_hashes(applied, server, kind):
    fs, store, cfg, views = applied(kind)
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=1), T0, conv_rate=0.5, trips=1, note="n", blob=b"\xff")], None)
    keys = server.redis().hkeys(_layout.row_key(cfg.project, ek(driver_id=1)))
    want = {_layout.field_hash("driver_stats", f) for f in ("conv_rate", "trips", "note", "blob")} | {b"_ts:driver_stats"}
    assert set(keys) == want


def test_binary_fields_round_trip_on_resp(server):
    r = server.redis()
    r.hset(b"\xff\xfe\x00key", mapping={b"\xff\xfe\xfd\xfc": b"\x00\x80", b"\xc3\x28": b""})
    assert r.hgetall(b"\xff\xfe\x00key") == {b"\xff\xfe\xfd\xfc": b"\x00\x80", b"\xc3\x28": b""}
    assert b"\xff\xfe\x00key" in list(r.scan_iter(match=b"\xff*", count=1000))
    r.delete(b"\xff\xfe\x00key")


@pytest.mark.parametrize("kind", PLUGINS)
def test_interop_with_feast_redis_store(applied, server, project, kind):
    # Feast's own Redis store on our RESP port and the plugin share rows.
    _, redis_store, rcfg, rviews = applied("redis", redis_port=server.resp_port)
    _, store, cfg, views = applied(kind)
    redis_store.online_write_batch(rcfg, rviews["stats"], [row(ek(driver_id=1), T0, trips=1, note="r")], None)
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=2), T0, trips=2, note="p")], None)
    keys = [ek(driver_id=1), ek(driver_id=2)]
    want = [(T0, {"note": ("string_val", "r"), "trips": ("int64_val", 1)}), (T0, {"note": ("string_val", "p"), "trips": ("int64_val", 2)})]
    assert plain(store.online_read(cfg, views["stats"], keys, ["trips", "note"])) == want
    assert plain(redis_store.online_read(rcfg, rviews["stats"], keys, ["trips", "note"])) == want
    # A stale write through one is stale to the other.
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=1), T0, trips=9)], None)
    assert plain(redis_store.online_read(rcfg, rviews["stats"], keys[:1], ["trips"])) == [(T0, {"trips": ("int64_val", 1)})]
    # Feast's own teardown, through our SCAN, deletes the project's rows.
    redis_store.teardown(rcfg, list(rviews.values()), [])
    assert [k for k in server.redis().scan_iter(count=1000) if _layout.in_project(k, project.encode())] == []


@pytest.mark.parametrize("kind", PLUGINS)
def test_update_drops_only_the_view(applied, server, kind):
    fs, store, cfg, views = applied(kind)
    store.online_write_batch(cfg, views["stats"], [row(ek(driver_id=i), T0, trips=i) for i in (1, 2)], None)
    store.online_write_batch(cfg, views["extra"], [row(ek(driver_id=1), T0, rating=5)], None)
    for _ in range(2):  # a rerun is a no-op
        store.update(cfg, [views["stats"]], [views["extra"]], [], [], partial=False)
    r = server.redis()
    assert r.hkeys(_layout.row_key(cfg.project, ek(driver_id=1))) in (
        [_layout.field_hash("driver_extra", "rating"), b"_ts:driver_extra"],
        [b"_ts:driver_extra", _layout.field_hash("driver_extra", "rating")])
    assert not r.exists(_layout.row_key(cfg.project, ek(driver_id=2)))
    assert plain(store.online_read(cfg, views["extra"], [ek(driver_id=1)], ["rating"])) == [(T0, {"rating": ("int64_val", 5)})]


@pytest.mark.parametrize("kind", PLUGINS)
def test_teardown_is_exact(applied, server, project, kind):
    a, ba = project, "b" + project
    fs_a, store_a, cfg_a, views_a = applied(kind, proj=a)
    fs_b, store_b, cfg_b, views_b = applied(kind, proj=ba)
    # A 42-character join value puts a 0x2a ('*') length byte in the key.
    keys = [ek(driver_id=i) for i in range(50)]
    for store, cfg, views in ((store_a, cfg_a, views_a), (store_b, cfg_b, views_b)):
        store.online_write_batch(cfg, views["stats"], [row(k, T0, trips=1) for k in keys], None)
    r = server.redis()
    r.set(b"unrelated" + a.encode(), b"x")
    fs_a.teardown()
    left = [k for k in r.scan_iter(count=1000) if _layout.in_project(k, a.encode())]
    assert left == []
    assert r.get(b"unrelated" + a.encode()) == b"x"
    assert len(plain([x for x in store_b.online_read(cfg_b, views_b["stats"], keys, ["trips"]) if x[1]])) == 50


@pytest.mark.parametrize("kind", PLUGINS)
def test_async_matches_sync(applied, kind):
    fs, store, cfg, views = applied(kind)
    assert store.async_supported.read and store.async_supported.write

    async def go():
        await store.online_write_batch_async(cfg, views["stats"], [row(ek(driver_id=1), T0, trips=1), row(ek(driver_id=1), T0, trips=2)], None)
        return await store.online_read_async(cfg, views["stats"], [ek(driver_id=1), ek(driver_id=9)], ["trips"])

    got = asyncio.run(go())
    assert plain(got) == plain(store.online_read(cfg, views["stats"], [ek(driver_id=1), ek(driver_id=9)], ["trips"]))
    assert plain(got) == [(T0, {"trips": ("int64_val", 1)}), None]
    resp = asyncio.run(fs.get_online_features_async(features=["driver_stats:trips"], entity_rows=[{"driver_id": 1}]))
    assert resp.to_dict()["trips"] == [1]


def test_empty_value_is_empty_bin_not_nil(applied, server):
    fs, store, cfg, views = applied("command-msgpack")
    store.online_write_batch(cfg, views["stats"], [(ek(driver_id=1), {"note": Value()}, T0, None)], None)
    assert server.redis().hget(_layout.row_key(cfg.project, ek(driver_id=1)), _layout.field_hash("driver_stats", "note")) == b""
