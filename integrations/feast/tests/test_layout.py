"""The layout against the spec's vectors and Feast's own encoders, and
config loading through Feast's resolution rules."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from feast.infra.key_encoding_utils import serialize_entity_key as feast_serialize
from feast.infra.online_stores.helpers import _mmh3, get_online_store_from_config
from feast.protos.feast.types.EntityKey_pb2 import EntityKey
from feast.protos.feast.types.Value_pb2 import Value
from google.protobuf.timestamp_pb2 import Timestamp

from feast_temporalstore import _layout
from feast_temporalstore_command._store import history_key, parse_own_key, track_key

VECTORS = [
    (["driver_id", "customer_id"], [Value(int64_val=1001), Value(string_val="5")], "demo",
     "02000000020000000b000000637573746f6d65725f696402000000090000006472697665725f69640200000001000000350400000008000000e90300000000000064656d6f"),
    (["driver_id"], [Value(int64_val=1001)], "",
     "0100000002000000090000006472697665725f69640400000008000000e903000000000000"),
    (["item_id"], [Value(int64_val=42)], "",
     "0100000002000000070000006974656d5f696404000000080000002a00000000000000"),
    (["__dummy_id"], [Value(string_val="")], "",
     "01000000020000000a0000005f5f64756d6d795f69640200000000000000"),
    (["entity"], [Value(int32_val=1)], "test",
     "010000000200000006000000656e7469747903000000040000000100000074657374"),
]


@pytest.mark.parametrize("names,values,project,want", VECTORS)
def test_entity_key_vectors(names, values, project, want):
    ek = EntityKey(join_keys=names, entity_values=values)
    got = _layout.row_key(project, ek)
    assert got.hex() == want
    assert feast_serialize(ek, entity_key_serialization_version=3) + project.encode() == got
    parsed = _layout.split_row_key(got)
    assert parsed is not None
    assert sorted(parsed[0]) == sorted(names)
    assert parsed[1] == project.encode()


def test_empty_entity_key():
    assert _layout.serialize_entity_key([], []).hex() == "00000000"


@pytest.mark.parametrize("s,want", [
    ("driver_stats:conv_rate", "fa731014"), ("driver_stats:trips", "426aa434"), ("bench_fv:f0", "a428c76b"),
    ("bench_fv:blob", "fa7b8f83"), ("feature_view_1:feature_10", "266d5f39"),
])
def test_field_hash(s, want):
    view, feature = s.split(":")
    assert _layout.field_hash(view, feature).hex() == want
    assert _mmh3(s) == _layout.field_hash(view, feature)


@pytest.mark.parametrize("dt", [
    datetime(2022, 3, 2, 23, 25, 0, tzinfo=timezone.utc),
    datetime(2022, 3, 2, 23, 25, 0, 123456, tzinfo=timezone.utc),
    datetime(1970, 1, 1, tzinfo=timezone.utc),
    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
    datetime(2262, 4, 1, tzinfo=timezone.utc),
    datetime(2022, 3, 2, 23, 25, 0, 7),  # naive: UTC
])
def test_timestamps_match_protobuf(dt):
    ts = Timestamp()
    ts.FromDatetime(dt)
    ns = _layout.to_nanos(dt)
    assert ns == ts.seconds * 1_000_000_000 + ts.nanos
    assert _layout.encode_timestamp(ns) == ts.SerializeToString()
    assert _layout.decode_timestamp(ts.SerializeToString()) == ns
    aware = dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
    assert _layout.timestamp_datetime(_layout.encode_timestamp(ns)) == aware
    assert _layout.timestamp_datetime(ts.SerializeToString()) == aware


def test_timestamp_vectors():
    assert _layout.encode_timestamp(1646263500 * 10**9).hex() == "08ccf9ff9006"
    assert _layout.encode_timestamp(1646263500 * 10**9 + 123456000).hex() == "08ccf9ff9006108094ef3a"
    assert _layout.decode_timestamp(b"") == 0
    assert _layout.decode_timestamp(None) is None
    with pytest.raises(ValueError):
        _layout.decode_timestamp(b"\x18\x01")


def test_split_rejects_what_is_not_a_row():
    for k in [b"", b"\x01", b"plain-key", b"\x01\x00\x00\x00\x02\x00\x00\x00\xff\x00\x00\x00x",
              history_key(b"a", "v", "f", b"\x00" * 4), track_key(b"a", 3)]:
        assert _layout.split_row_key(k) is None or not _layout.in_project(k, b"a")


def test_own_keys_are_exact():
    ek = _layout.serialize_entity_key(["id"], [Value(int64_val=1)])
    assert parse_own_key(ek + b"a", b"a") == "row"
    assert parse_own_key(ek + b"ba", b"a") is None
    assert parse_own_key(history_key(b"a", "v", "f", ek), b"a") == "history"
    assert parse_own_key(history_key(b"ba", "v", "f", ek), b"a") is None
    assert parse_own_key(track_key(b"a", 7), b"a") == "track"
    assert parse_own_key(track_key(b"ba", 7), b"a") is None


def test_escape_glob():
    assert _layout.escape_glob(b"a*b?[c]\\") == b"a\\*b\\?\\[c\\]\\\\"


# -- configuration, through Feast's own resolution ------------------------------

def _repo_config(online_store):
    from feast import RepoConfig

    return RepoConfig(project="p", provider="local", registry="/tmp/unused-registry.db", online_store=online_store)


@pytest.mark.parametrize("type_,cls", [
    ("feast_temporalstore.TemporalStoreOnlineStore", "TemporalStoreOnlineStore"),
    ("feast_temporalstore._resp.TemporalStoreOnlineStore", "TemporalStoreOnlineStore"),
    ("feast_temporalstore_command.TemporalStoreCommandOnlineStore", "TemporalStoreCommandOnlineStore"),
    ("feast_temporalstore_command._store.TemporalStoreCommandOnlineStore", "TemporalStoreCommandOnlineStore"),
])
def test_config_types_load(type_, cls):
    cfg = _repo_config({"type": type_})
    assert type(get_online_store_from_config(cfg.online_store)).__name__ == cls
    # The bare form builds the config with every default.
    bare = _repo_config(type_)
    assert type(get_online_store_from_config(bare.online_store)).__name__ == cls


def test_config_original_fields_and_unknown_keys():
    cfg = _repo_config({"type": "feast_temporalstore_command.TemporalStoreCommandOnlineStore", "host": "127.0.0.1",
                        "port": 17102, "shard_id": 1})
    assert cfg.online_store.shard_id == 1
    with pytest.raises(Exception, match="nope"):
        _repo_config({"type": "feast_temporalstore.TemporalStoreOnlineStore", "nope": 1}).online_store


def test_config_needs_online_store_suffix():
    from feast.errors import FeastOnlineStoreInvalidName

    with pytest.raises(FeastOnlineStoreInvalidName):
        _repo_config({"type": "feast_temporalstore.TemporalStore"}).online_store
