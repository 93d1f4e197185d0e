"""Feast's Redis online-store layout, byte for byte, shared by both plugins.

A row is one hash per (project, entity) at ``serialize_entity_key(ek, 3) +
project``; each feature is the field ``mmh3(f"{view}:{feature}")`` holding
ValueProto bytes, and each view has the field ``_ts:<view>`` holding a
serialized ``google.protobuf.Timestamp``. Keeping it exactly lets Feast's own
``type: redis`` store and both plugins read each other's rows.

Keys are parsed back (``split_row_key``) so that teardown and update touch a
project's rows only: the project must *equal* what follows the entity key,
where a glob suffix match would also take project ``ba``'s rows for ``a``.
"""

from __future__ import annotations

import struct
from datetime import datetime, timedelta, timezone
from typing import Iterable, List, Optional, Sequence, Tuple

import mmh3
from google.protobuf.timestamp_pb2 import Timestamp as _Timestamp

# ValueType numbers of the entity value types v3 serializes.
_STRING, _BYTES, _INT32, _INT64, _UNIX_TIMESTAMP = 2, 1, 3, 4, 8

_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_INT64_HEAD = struct.pack("<II", _INT64, 8)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def serialize_entity_key(join_keys: Sequence[str], values: Sequence) -> bytes:
    """Entity key serialization v3 of an EntityKeyProto's keys and values.

    ``values`` are ValueProto messages. Several keys are sorted by name
    (code-point order, which is UTF-8 byte order); one is not.
    """
    pairs = list(zip(join_keys, values))
    if len(pairs) > 1:
        pairs.sort(key=lambda p: p[0])
    out = [_U32.pack(len(pairs))]
    for name, _ in pairs:
        b = name.encode("utf-8")
        out += (_U32.pack(_STRING), _U32.pack(len(b)), b)
    for _, v in pairs:
        typ, b = _value_bytes(v)
        out += (_U32.pack(typ), _U32.pack(len(b)), b)
    return b"".join(out)


def _value_bytes(v) -> Tuple[int, bytes]:
    which = v.WhichOneof("val")
    if which == "string_val":
        return _STRING, v.string_val.encode("utf-8")
    if which == "bytes_val":
        return _BYTES, v.bytes_val
    if which == "int32_val":
        return _INT32, struct.pack("<i", v.int32_val)
    if which == "int64_val":
        return _INT64, struct.pack("<q", v.int64_val)
    if which == "unix_timestamp_val":
        return _UNIX_TIMESTAMP, struct.pack("<q", v.unix_timestamp_val)
    raise ValueError(f"entity value type not supported by entity key serialization v3: {which}")


# The name section of single-key entity keys, by name: most keys have one
# join key, and a read serializes one per entity.
_single_prefix: dict = {}


def entity_key_bytes(entity_key) -> bytes:
    """v3 serialization of an EntityKeyProto."""
    names = entity_key.join_keys
    if len(names) == 1:
        v = entity_key.entity_values[0]
        if v.WhichOneof("val") == "int64_val":
            p = _single_prefix.get(names[0])
            if p is None:
                if len(_single_prefix) > 1024:
                    _single_prefix.clear()
                b = names[0].encode("utf-8")
                p = _single_prefix[names[0]] = _U32.pack(1) + _U32.pack(_STRING) + _U32.pack(len(b)) + b + _INT64_HEAD
            return p + _I64.pack(v.int64_val)
    return serialize_entity_key(list(names), list(entity_key.entity_values))


def row_key(project: str, entity_key) -> bytes:
    """The Redis key of an entity's row in project."""
    return entity_key_bytes(entity_key) + project.encode("utf-8")


def split_row_key(key: bytes) -> Optional[Tuple[List[str], bytes]]:
    """The join-key names of a v3 row key and the bytes after the entity key
    (the project), or None when key is not a v3 entity key."""
    try:
        (n,) = _U32.unpack_from(key, 0)
        pos = 4
        if n > len(key):
            return None
        names = []
        for _ in range(n):
            typ, ln = struct.unpack_from("<II", key, pos)
            pos += 8
            if typ != _STRING or pos + ln > len(key):
                return None
            names.append(key[pos : pos + ln].decode("utf-8"))
            pos += ln
        for _ in range(n):
            _typ, ln = struct.unpack_from("<II", key, pos)
            pos += 8 + ln
            if pos > len(key):
                return None
        return names, key[pos:]
    except (struct.error, UnicodeDecodeError):
        return None


def in_project(key: bytes, project: bytes) -> bool:
    """Whether key is a row of exactly project."""
    parts = split_row_key(key)
    return parts is not None and parts[1] == project


def field_hash(view: str, feature: str) -> bytes:
    """The hash field of a feature: MurmurHash3 x86_32 of "view:feature",
    seed 0, unsigned, 4 little-endian bytes (Feast's ``_mmh3``)."""
    return _U32.pack(mmh3.hash(f"{view}:{feature}", signed=False))


def ts_field(view: str) -> str:
    return f"_ts:{view}"


def escape_glob(b: bytes) -> bytes:
    """b with Redis glob's special bytes escaped, so it matches itself."""
    out = bytearray()
    for c in b:
        if c in b"*?[]\\":
            out.append(0x5C)
        out.append(c)
    return bytes(out)


def to_nanos(ts: datetime) -> int:
    """Unix nanoseconds of ts, exactly (a naive time is UTC)."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    d = ts - _EPOCH
    return ((d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds) * 1000


def encode_timestamp(ns: int) -> bytes:
    """A serialized google.protobuf.Timestamp of Unix nanoseconds, as
    protobuf writes it: zero fields left out, varints, int64 seconds and
    int32 nanos."""
    s, n = divmod(ns, 1_000_000_000)
    out = bytearray()
    if s:
        out.append(0x08)
        _put_varint(out, s & 0xFFFFFFFFFFFFFFFF)
    if n:
        out.append(0x10)
        _put_varint(out, n)
    return bytes(out)


def timestamp_datetime(b: bytes) -> datetime:
    """The tz-aware UTC datetime of a serialized Timestamp (microsecond
    precision, as datetime has), parsed by protobuf's C parser."""
    ts = _Timestamp()
    ts.ParseFromString(b)
    return _EPOCH + timedelta(seconds=ts.seconds, microseconds=ts.nanos // 1000)


def decode_timestamp(b: Optional[bytes]) -> Optional[int]:
    """Unix nanoseconds of a serialized Timestamp (empty is the epoch), or
    None for None."""
    if b is None:
        return None
    s = n = 0
    pos = 0
    while pos < len(b):
        tag, pos = _get_varint(b, pos)
        v, pos = _get_varint(b, pos)
        if tag == 0x08:
            s = v - (1 << 64) if v >= 1 << 63 else v
        elif tag == 0x10:
            v &= 0xFFFFFFFF
            n = v - (1 << 32) if v >= 1 << 31 else v
        else:
            raise ValueError(f"not a Timestamp: field tag {tag}")
    return s * 1_000_000_000 + n


def _put_varint(out: bytearray, v: int) -> None:
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _get_varint(b: bytes, pos: int) -> Tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= len(b) or shift > 63:
            raise ValueError("truncated varint")
        c = b[pos]
        pos += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, pos
        shift += 7


def bucket(key: bytes, n: int) -> int:
    """key's bucket of n, by MurmurHash3."""
    return mmh3.hash(key, signed=False) % n


def view_fields(view: str, features: Iterable[str]) -> List[bytes]:
    return [field_hash(view, f) for f in features]
