"""A small keep-alive client of the HTTP command surface (/batch_execute).

One connection per thread (a socket, TCP_NODELAY, HTTP/1.1 keep-alive) and, for asyncio, a
pool of stream connections per event loop. Bodies are MessagePack (bytes as
bin) or JSON (names as arrays of numbers, payloads as base64), and replies are
decoded back to bytes either way.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import threading
from typing import Any, Dict, List, Optional, Tuple, Union

import msgpack

# Wire fields that are names (Text): JSON takes bytes there as an array of
# numbers; every other bytes field is a payload (Bytes), base64 in JSON.
_TEXT_FIELDS = frozenset({"key", "keys", "field", "fields", "dest"})


class CommandError(Exception):
    """A command the server answered with a failed status."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class TransportError(Exception):
    """A request the server refused whole (HTTP status, or an unreadable reply)."""


def _json_ready(v: Any, name: str = "") -> Any:
    if isinstance(v, (bytes, bytearray)):
        return list(v) if name in _TEXT_FIELDS else base64.b64encode(v).decode("ascii")
    if isinstance(v, dict):
        return {k: _json_ready(x, k) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_ready(x, name) for x in v]
    return v


class Codec:
    def __init__(self, encoding: str) -> None:
        if encoding not in ("msgpack", "json"):
            raise ValueError(f"encoding {encoding!r}: msgpack or json")
        self.msgpack = encoding == "msgpack"
        self.content_type = "application/msgpack" if self.msgpack else "application/json"

    def encode(self, body: Dict[str, Any]) -> bytes:
        if self.msgpack:
            return msgpack.packb(body, use_bin_type=True)
        return json.dumps(_json_ready(body), separators=(",", ":")).encode()

    def decode(self, data: bytes) -> Dict[str, Any]:
        if self.msgpack:
            # Tuples, not lists: cheaper to build, and replies are only read.
            return msgpack.unpackb(data, raw=False, use_list=False)
        return json.loads(data)

    def values(self, v: Any) -> List[Optional[bytes]]:
        """A values reply: bytes or None per field (JSON's [] is b"")."""
        if v is None:
            return []
        if self.msgpack:
            return v
        return [None if x is None else bytes(x) for x in v]

    def keys(self, v: Any) -> List[bytes]:
        if not v:
            return []
        if self.msgpack:
            return [k if isinstance(k, bytes) else k.encode() for k in v]
        return [bytes(k) if isinstance(k, list) else k.encode() for k in v]


def results(codec: Codec, reply: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Each command's response of a /batch_execute reply, raising the
    first failed status."""
    status = reply.get("status") or {}
    if not status.get("ok", False):
        raise CommandError(status.get("code", "unknown"), status.get("message", ""))
    out = []
    for r in reply.get("responses", []):
        st = r.get("status") or {}
        if not st.get("ok", False):
            raise CommandError(st.get("code", "unknown"), st.get("message", ""))
        out.append(r.get("response") or {})
    return out


_USUAL = b"HTTP/1.1 200 OK\r\nContent-Length: "


def parse_response(buf: Union[bytes, bytearray]) -> Optional[Tuple[int, bytes, bool, int]]:
    """The HTTP/1.1 response at the start of buf: (status, body, keep-alive,
    bytes it took), or None while buf does not hold all of it. Both the
    socket client and the asyncio one feed it what they read."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    if buf.startswith(_USUAL):
        # The server's usual reply (200, its length first, neither chunked
        # nor closing) in a few searches: the general parse below costs
        # more than a tenth of a warm one-row read.
        head = bytes(buf[: end + 2]).lower()
        digits = head[len(_USUAL) : head.find(b"\r\n", len(_USUAL))]
        if digits.isdigit() and b"\r\nconnection:" not in head and b"\r\ntransfer-encoding:" not in head:
            pos = end + 4
            length = int(digits)
            if len(buf) < pos + length:
                return None
            return 200, bytes(buf[pos : pos + length]), True, pos + length
    lines = bytes(buf[:end]).split(b"\r\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise TransportError(f"bad status line {lines[0]!r}")
    status, length, keep, chunked = int(parts[1]), 0, True, False
    for h in lines[1:]:
        k, _, v = h.partition(b":")
        k, v = k.strip().lower(), v.strip().lower()
        if k == b"content-length":
            if not v.isdigit():
                raise TransportError(f"bad Content-Length {v!r}")
            length = int(v)
        elif k == b"connection" and v == b"close":
            keep = False
        elif k == b"transfer-encoding" and b"chunked" in v:
            chunked = True
    pos = end + 4
    if not chunked:
        if len(buf) < pos + length:
            return None
        return status, bytes(buf[pos : pos + length]), keep, pos + length
    body = bytearray()
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        try:
            size = int(bytes(buf[pos:eol]).split(b";")[0], 16)
        except ValueError:
            raise TransportError(f"bad chunk size {bytes(buf[pos:eol])!r}") from None
        pos = eol + 2
        if len(buf) < pos + size + 2:
            return None
        if size == 0:  # no trailers
            return status, bytes(body), keep, pos + 2
        body += buf[pos : pos + size]
        pos += size + 2


class _Reader:
    """Reads one HTTP/1.1 response at a time from a blocking socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def response(self) -> Tuple[int, bytes, bool]:
        while True:
            # Under 128 KiB, so a recv's buffer comes from the heap rather
            # than from an mmap and munmap of its own (10 µs a call here).
            chunk = self.sock.recv(65536)
            if not chunk:
                raise _Closed(bool(self.buf))
            if not self.buf:
                # The usual case: the whole reply in one read, parsed
                # where it lies.
                got = parse_response(chunk)
                if got is not None and got[3] == len(chunk):
                    return got[:3]
            self.buf += chunk
            got = parse_response(self.buf)
            if got is not None:
                status, body, keep, used = got
                del self.buf[:used]
                return status, body, keep


class _Closed(Exception):
    """The server closed the connection; got_reply says whether any byte of
    the reply had arrived."""

    def __init__(self, got_reply: bool) -> None:
        super().__init__("connection closed by the server")
        self.got_reply = got_reply


class Transport:
    """Posts bodies to the server; safe for concurrent use (a connection a
    thread)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        encoding: str = "msgpack",
        token: Optional[str] = None,
        tls: Optional[ssl.SSLContext] = None,
        timeout: float = 5.0,
    ) -> None:
        self.host, self.port, self.timeout, self.tls = host, port, timeout, tls
        self.codec = Codec(encoding)
        self.headers = {"Content-Type": self.codec.content_type, "Accept": self.codec.content_type}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self._local = threading.local()
        self._heads: Dict[str, bytes] = {}
        self._pools: Dict[int, Tuple[asyncio.AbstractEventLoop, List[Tuple[asyncio.StreamReader, asyncio.StreamWriter]]]] = {}
        self.requests = 0  # requests sent: tests count round trips with it

    def _conn(self) -> _Reader:
        c = getattr(self._local, "conn", None)
        if c is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            c = self._local.conn = _Reader(sock)
        return c

    def _drop(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.sock.close()
            self._local.conn = None

    def post(self, path: str, body: Dict[str, Any]) -> Dict[str, Any]:
        # http.client costs about 100 µs a request in header handling; a
        # request here is one sendall and its reply a parse of a few lines.
        data = self.codec.encode(body)
        head = self._heads.get(path)
        if head is None:
            head = self._heads[path] = self._head(path)
        req = head + str(len(data)).encode() + b"\r\n\r\n" + data
        self.requests += 1
        for attempt in (0, 1):
            fresh = getattr(self._local, "conn", None) is None
            c = self._conn()
            try:
                c.sock.sendall(req)
                status, payload, keep = c.response()
                break
            except _Closed as e:
                self._drop()
                # A kept-alive connection the server closed while idle: the
                # request never ran, so one retry on a new one is safe.
                if e.got_reply or fresh or attempt:
                    raise TransportError("connection closed by the server") from e
            except (OSError, TransportError):
                self._drop()
                raise
        if not keep:
            self._drop()
        return self._reply(status, payload)

    def _head(self, path: str) -> bytes:
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        return ("\r\n".join(lines) + "\r\nContent-Length: ").encode()

    def _reply(self, status: int, payload: bytes) -> Dict[str, Any]:
        try:
            reply = self.codec.decode(payload)
        except Exception as e:
            raise TransportError(f"HTTP {status}: unreadable reply: {payload[:200]!r}") from e
        if status != 200:
            st = reply.get("status", reply) if isinstance(reply, dict) else {}
            raise CommandError(st.get("code", f"http_{status}"), st.get("message", ""))
        return reply

    def batch(self, commands: List[Dict[str, Any]], extra: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        body = dict(extra or {})
        body["commands"] = commands
        return results(self.codec, self.post("/batch_execute", body))

    # -- asyncio -----------------------------------------------------------

    async def _acquire(self):
        loop = asyncio.get_running_loop()
        got = self._pools.get(id(loop))
        if got is None or got[0] is not loop:
            got = self._pools[id(loop)] = (loop, [])
        pool = got[1]
        while pool:
            r, w = pool.pop()
            if not w.is_closing() and not r.at_eof():
                return r, w, pool
        r, w = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, ssl=self.tls), self.timeout
        )
        sock = w.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return r, w, pool

    async def post_async(self, path: str, body: Dict[str, Any]) -> Dict[str, Any]:
        data = self.codec.encode(body)
        self.requests += 1
        r, w, pool = await self._acquire()
        head = self._heads.get(path)
        if head is None:
            head = self._heads[path] = self._head(path)
        try:
            w.write(head + str(len(data)).encode() + b"\r\n\r\n" + data)
            await w.drain()
            status, payload, keep = await asyncio.wait_for(_read_response(r), self.timeout)
        except BaseException:
            w.close()
            raise
        if keep:
            pool.append((r, w))
        else:
            w.close()
        return self._reply(status, payload)

    async def batch_async(self, commands: List[Dict[str, Any]], extra: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        body = dict(extra or {})
        body["commands"] = commands
        return results(self.codec, await self.post_async("/batch_execute", body))

    def close(self) -> None:
        self._drop()
        for loop, pool in self._pools.values():
            for _, w in pool:
                w.close()
        self._pools.clear()


async def _read_response(r: asyncio.StreamReader) -> Tuple[int, bytes, bool]:
    buf = bytearray()
    while True:
        got = parse_response(buf)
        if got is not None:
            return got[:3]
        chunk = await r.read(262144)
        if not chunk:
            raise TransportError("connection closed by the server")
        buf += chunk
