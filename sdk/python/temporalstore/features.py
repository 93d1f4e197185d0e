"""Feature serving: latest-value rows, feature history series and plain
keys.

Rows are hashes written only when their event time is newer than the
stored one (``row_write``/``row_write_batch``): an older or equal event
time is a stale write, skipped without changing anything, so late or
replayed events never overwrite fresher features. Reads of many rows go
in one ``/batch_execute``.

History series hold (timestamp in Unix ms, value bytes) points per key,
one value per timestamp; they are appended to with a write policy and read
or aggregated over a window ``start_ms..end_ms`` (both ends inclusive).
Numeric aggregates read values as decimal integers (``b"42"``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ._codec import (
    BytesLike,
    Name,
    check_int,
    from_wire_bytes,
    from_wire_name,
    name_bytes,
    wire_bytes,
    wire_name,
)
from .client import Client, now_ms
from .errors import ProtocolError

__all__ = ["FeatureClient", "Row", "AggregateValue", "window"]

#: An aggregate's value: an int for the integer aggregators, a float for
#: sumf/avgf/minf/maxf/pNN/decay:H, and (value, count) pairs for top:K.
AggregateValue = Union[int, float, "list[tuple[bytes, int]]"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def window(window_ms: int, at_ms: int | None = None) -> tuple[int, int]:
    """The inclusive range of the last ``window_ms`` milliseconds ending at
    ``at_ms`` (default now): ``(at_ms - window_ms + 1, at_ms)``."""
    check_int(window_ms, "window_ms")
    end = now_ms() if at_ms is None else check_int(at_ms, "at_ms")
    return end - window_ms + 1, end


def datetime_ns(t: _dt.datetime) -> int:
    """A timezone-aware datetime as Unix nanoseconds, exactly."""
    if t.tzinfo is None or t.utcoffset() is None:
        raise ValueError("event_time must be timezone-aware (a naive datetime has no fixed instant)")
    d = t - _EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000_000 + d.microseconds * 1_000


@dataclass
class Row:
    """One entity's feature row for :meth:`FeatureClient.write_rows`: its
    key, field values, and event time in ms or ns (give one)."""

    key: Name
    fields: Mapping[Name, BytesLike]
    event_time_ms: int | None = None
    event_time_ns: int | None = None


def _pairs(fields: Mapping[Name, BytesLike]) -> list[str]:
    if not fields:
        raise ValueError("a row needs at least one field")
    args: list[str] = []
    for f, v in fields.items():
        args.append(wire_bytes(name_bytes(f)))
        args.append(wire_bytes(v))
    return args


def _event_time(
    event_time_ms: int | None, event_time_ns: int | None, event_time: _dt.datetime | None
) -> dict[str, int]:
    given = [x is not None for x in (event_time_ms, event_time_ns, event_time)]
    if sum(given) != 1:
        raise ValueError("give exactly one of event_time_ms, event_time_ns, event_time")
    if event_time is not None:
        return {"event_time_ns": datetime_ns(event_time)}
    if event_time_ns is not None:
        return {"event_time_ns": check_int(event_time_ns, "event_time_ns")}
    return {"event_time_ms": check_int(event_time_ms, "event_time_ms")}


def _entries(resp: dict[str, Any]) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for pair in resp.get("entries") or []:
        out[from_wire_name(pair[0])] = from_wire_bytes(pair[1]) or b""
    return out


def _int_value(resp: dict[str, Any]) -> int:
    v = resp.get("value")
    if not isinstance(v, int):
        raise ProtocolError(f"expected an integer reply, got {resp!r:.200}")
    return v


def _float(v: Any) -> float:
    # Whole floats arrive as JSON integers; infinities and NaN as strings.
    return float(v)


class FeatureClient(Client):
    """Feature serving over the HTTP surface: rows, history series, keys.

    Keys and field names are ``str`` (UTF-8) or ``bytes``; values are
    ``bytes`` in and out, any bytes at all. Times are Unix milliseconds
    unless named ``_ns``.
    """

    # Plain keys.

    def get(self, key: Name) -> bytes | None:
        """The value of a string key, None when absent."""
        return from_wire_bytes(self._run("get", key=wire_name(key)).get("value"))

    def set(
        self, key: Name, value: BytesLike, *, ttl_ms: int | None = None, nx: bool = False, xx: bool = False
    ) -> bool:
        """Sets a string key; ``nx``: only if absent, ``xx``: only if
        present. Returns whether it was set."""
        if nx and xx:
            raise ValueError("nx and xx exclude each other")
        cond = "nx" if nx else "xx" if xx else None
        r = self._run("set", key=wire_name(key), value=wire_bytes(value), ttl_ms=ttl_ms, condition=cond)
        return bool(r.get("applied"))

    def delete(self, key: Name) -> bool:
        """Deletes a key of any type; whether it existed."""
        return _int_value(self._run("delete", key=wire_name(key))) > 0

    # Rows.

    def write_row(
        self,
        key: Name,
        fields: Mapping[Name, BytesLike],
        *,
        event_time_ms: int | None = None,
        event_time_ns: int | None = None,
        event_time: _dt.datetime | None = None,
        ts_format: str = "ms",
        ts_field: str | None = None,
        ttl_ms: int | None = None,
    ) -> bool:
        """Writes a row's fields if its event time is newer than the stored
        one; returns False for a stale (older or equal) write, which
        changes nothing. The event time is stored in ``ts_field`` (default
        ``_ts``) as ``ts_format``: ``"ms"`` (writes within one millisecond
        compare equal), ``"ns"``, or ``"proto"`` (a serialized protobuf
        Timestamp, Feast's layout). ``ttl_ms`` renews the row's TTL on
        write."""
        cmd: dict[str, Any] = {"kind": "row_write", "key": wire_name(key), "args": _pairs(fields)}
        cmd.update(_event_time(event_time_ms, event_time_ns, event_time))
        self._row_options(cmd, ts_format, ts_field, ttl_ms)
        return bool(self.execute(cmd).get("applied"))

    def write_rows(
        self,
        rows: Iterable[Row],
        *,
        ts_format: str = "ms",
        ts_field: str | None = None,
        ttl_ms: int | None = None,
    ) -> list[bool]:
        """Writes rows in one command, each under the rule of
        :meth:`write_row` (rows of one key apply in order); returns which
        were written."""
        wrows: list[dict[str, Any]] = []
        for r in rows:
            wr: dict[str, Any] = {"key": wire_name(r.key), "args": _pairs(r.fields)}
            wr.update(_event_time(r.event_time_ms, r.event_time_ns, None))
            wrows.append(wr)
        if not wrows:
            return []
        cmd: dict[str, Any] = {"kind": "row_write_batch", "rows": wrows}
        self._row_options(cmd, ts_format, ts_field, ttl_ms)
        ints = self.execute(cmd).get("integers") or []
        if len(ints) != len(wrows):
            raise ProtocolError(f"row_write_batch of {len(wrows)} rows answered {len(ints)}")
        return [bool(n) for n in ints]

    @staticmethod
    def _row_options(cmd: dict[str, Any], ts_format: str, ts_field: str | None, ttl_ms: int | None) -> None:
        if ts_format != "ms":
            cmd["ts_format"] = ts_format
        if ts_field is not None:
            cmd["ts_field"] = ts_field
        if ttl_ms is not None:
            cmd["ttl_ms"] = check_int(ttl_ms, "ttl_ms")

    def read_row(self, key: Name, fields: Sequence[Name] | None = None) -> dict[bytes, bytes | None]:
        """One row; see :meth:`read_rows`."""
        return self.read_rows([key], fields)[0]

    def read_rows(
        self, keys: Sequence[Name], fields: Sequence[Name] | None = None, *, max_batch: int = 10_000
    ) -> list[dict[bytes, bytes | None]]:
        """Rows of many keys in one ``/batch_execute`` (more only past
        ``max_batch`` keys), in the order of ``keys``. With ``fields``, each
        row maps those fields (as bytes) to their value or None; without,
        it holds every stored field, the event time field included, and a
        missing row is ``{}``."""
        if fields is not None:
            fnames = [name_bytes(f) for f in fields]
            if not fnames:
                return [{} for _ in keys]
            args = [wire_bytes(f) for f in fnames]
            cmds = [{"kind": "hmget", "key": wire_name(k), "args": args} for k in keys]
        else:
            cmds = [{"kind": "hgetall", "key": wire_name(k)} for k in keys]
        out: list[dict[bytes, bytes | None]] = []
        for i in range(0, len(cmds), max_batch):
            for resp in self.batch(cmds[i : i + max_batch]):
                if fields is None:
                    out.append(dict(_entries(resp)))
                    continue
                vals = resp.get("values") or [None] * len(fnames)
                out.append({f: from_wire_bytes(v) for f, v in zip(fnames, vals)})
        return out

    # History series.

    def append(
        self,
        key: Name,
        points: Mapping[int, BytesLike] | Iterable[tuple[int, BytesLike]],
        *,
        policy: str = "upsert",
        max_age_ms: int | None = None,
    ) -> bool:
        """Adds (timestamp_ms, value) points to a series under ``policy``:
        ``upsert`` (the default) writes all, ``insert_if_absent`` only at
        timestamps without a point, ``replace_existing`` only over existing
        ones. ``max_age_ms`` drops points older than now minus it. Returns
        whether the series changed."""
        items = points.items() if isinstance(points, Mapping) else points
        wpoints = [{"timestamp_ms": check_int(ts, "timestamp_ms"), "value": wire_bytes(v)} for ts, v in items]
        r = self._run("fappend", key=wire_name(key), points=wpoints, policy=policy, max_age_ms=max_age_ms)
        return _int_value(r) > 0

    def history(
        self, key: Name, start_ms: int, end_ms: int, *, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        """The points of ``start_ms..end_ms``, oldest first (the first
        ``limit`` with a limit)."""
        r = self._run(
            "fquery",
            key=wire_name(key),
            start=check_int(start_ms, "start_ms"),
            end=check_int(end_ms, "end_ms"),
            count=limit,
        )
        return [(p["timestamp_ms"], from_wire_bytes(p["value"]) or b"") for p in r.get("points") or []]

    def aggregate(
        self, key: Name, start_ms: int, end_ms: int, aggregator: str = "sum", *, limit: int | None = None
    ) -> AggregateValue:
        """One aggregate of the window's values: ``sum``, ``count``,
        ``avg`` (integer division), ``min``, ``max``, ``first``, ``last``;
        also ``sumf``, ``avgf``, ``minf``, ``maxf``, ``pNN`` (floats),
        ``distinct``, ``top:K``, ``decay:H``. An empty window is 0."""
        return self.aggregates(key, start_ms, end_ms, [aggregator], limit=limit)[aggregator]

    def aggregates(
        self,
        key: Name,
        start_ms: int,
        end_ms: int,
        aggregators: Sequence[str],
        *,
        limit: int | None = None,
    ) -> dict[str, AggregateValue]:
        """Several aggregates of one window in one pass, by name."""
        if not aggregators:
            return {}
        base: dict[str, Any] = {
            "key": wire_name(key),
            "start": check_int(start_ms, "start_ms"),
            "end": check_int(end_ms, "end_ms"),
            "count": limit,
        }
        if len(aggregators) == 1:
            r = self._run("fagg", aggregator=aggregators[0], **base)
        else:
            r = self._run("fagg", aggregators=list(aggregators), **base)
        if r.get("kind") == "aggregate":
            return {aggregators[0]: _int_value(r)}
        out: dict[str, AggregateValue] = {}
        for a in r.get("aggregates") or []:
            if a.get("has_top"):
                out[a["name"]] = [(from_wire_bytes(t["value"]) or b"", t["count"]) for t in a.get("top") or []]
            elif "float" in a:
                out[a["name"]] = _float(a["float"])
            else:
                out[a["name"]] = a.get("int", 0)
        return out

    def delete_series(self, key: Name) -> bool:
        """Deletes a series; whether there was one."""
        return _int_value(self._run("fdel", key=wire_name(key))) > 0
