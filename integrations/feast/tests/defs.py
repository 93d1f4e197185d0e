"""Feature definitions and row builders the tests share."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, List, Optional

from feast import Entity, FeatureView, Field, FileSource, ValueType
from feast.protos.feast.types.EntityKey_pb2 import EntityKey
from feast.protos.feast.types.Value_pb2 import Value
from feast.types import Bytes, Float64, Int64, String

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)


def source(repo: Path, name: str = "src") -> FileSource:
    return FileSource(name=name, path=str(repo / f"{name}.parquet"), timestamp_field="event_timestamp")


def driver_defs(repo: Path):
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    stats = FeatureView(name="driver_stats", entities=[driver], online=True, source=source(repo),
                        schema=[Field(name="conv_rate", dtype=Float64), Field(name="trips", dtype=Int64),
                                Field(name="note", dtype=String), Field(name="blob", dtype=Bytes)])
    extra = FeatureView(name="driver_extra", entities=[driver], online=True, source=source(repo, "src2"),
                        schema=[Field(name="rating", dtype=Int64)])
    return driver, stats, extra


def ek(**keys) -> EntityKey:
    names, values = [], []
    for k, v in keys.items():
        names.append(k)
        values.append(Value(string_val=v) if isinstance(v, str) else Value(int64_val=v))
    return EntityKey(join_keys=names, entity_values=values)


def row(key: EntityKey, at: datetime, **features) -> tuple:
    vals: Dict[str, Value] = {}
    for k, v in features.items():
        if v is None:
            vals[k] = Value()
        elif isinstance(v, bytes):
            vals[k] = Value(bytes_val=v)
        elif isinstance(v, str):
            vals[k] = Value(string_val=v)
        elif isinstance(v, float):
            vals[k] = Value(double_val=v)
        else:
            vals[k] = Value(int64_val=v)
    return (key, vals, at, None)


def plain(read: List[tuple]) -> List[Optional[tuple]]:
    """online_read's rows as comparable Python values."""
    out = []
    for ts, feats in read:
        if feats is None:
            out.append(None)
            continue
        out.append((ts, {k: (v.WhichOneof("val"), getattr(v, v.WhichOneof("val")) if v.WhichOneof("val") else None)
                        for k, v in sorted(feats.items())}))
    return out


def micro(n: int) -> timedelta:
    return timedelta(microseconds=n)
