"""Conversions between Python values and the HTTP surface's JSON forms.

Payloads (values, members, args) go out as base64 strings; names (keys,
fields) go out as JSON strings when they are valid UTF-8 and as arrays of
numbers 0..255 otherwise, so that any byte string round-trips. Replies
carry bytes as arrays of numbers 0..255, and names as strings or such
arrays.
"""

from __future__ import annotations

import base64
from typing import Any, Union

BytesLike = Union[bytes, bytearray, memoryview]
Name = Union[str, bytes, bytearray, memoryview]

WireName = Union[str, "list[int]"]


def name_bytes(x: Name) -> bytes:
    """A key or field as bytes: str is taken as its UTF-8 encoding."""
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x)
    raise TypeError(f"a key or field must be str or bytes, not {type(x).__name__}")


def wire_name(x: Name) -> WireName:
    """A key or field in its wire form."""
    if isinstance(x, str):
        x.encode("utf-8")  # refuse lone surrogates here, not as U+FFFD on the server
        return x
    b = name_bytes(x)
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return list(b)


def wire_bytes(x: BytesLike) -> str:
    """A payload in its wire form (base64). str is refused: a value's
    encoding is the caller's choice, not a guess."""
    if isinstance(x, (bytes, bytearray, memoryview)):
        return base64.b64encode(x).decode("ascii")
    raise TypeError(f"a value must be bytes, not {type(x).__name__}")


def wire_bytes_list(xs: Any) -> list[str]:
    return [wire_bytes(x) for x in xs]


def from_wire_bytes(v: Any) -> bytes | None:
    """A reply's bytes (array of numbers; null is None)."""
    if v is None:
        return None
    if isinstance(v, list):
        return bytes(v)
    if isinstance(v, str):
        return base64.b64decode(v)
    raise TypeError(f"expected bytes on the wire, got {type(v).__name__}")


def from_wire_name(v: Any) -> bytes:
    """A reply's name (a string, or an array of numbers)."""
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, list):
        return bytes(v)
    raise TypeError(f"expected a name on the wire, got {type(v).__name__}")


def raw_default(o: Any) -> Any:
    """json.dumps's fallback for raw commands: bytes become an array of
    numbers, which every byte field and every name field accepts."""
    if isinstance(o, (bytes, bytearray, memoryview)):
        return list(bytes(o))
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


def check_int(x: Any, name: str) -> int:
    """x when it is an int (bool refused): a float would be a bad_request
    on the server, and is caught here with the field's name."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{name} must be an int, not {type(x).__name__}")
    return x
