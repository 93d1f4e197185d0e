"""HTTP/1.1 transport to the server's command surface.

One kept-alive ``http.client`` connection per thread (``threading.local``),
with TCP_NODELAY, an optional bearer token and optional TLS.

A request is retried at most once, and only when a connection that already
served a request turns out to be dead: closed or reset by the server
before a single byte of the reply arrived, which is what a server's idle
timeout or restart leaves behind. An idle connection found closed before
sending is simply replaced. A failure on a fresh connection, a timeout, or
a reset after any reply byte is never retried, since the command may have
run. (A server that dies while running a command before replying looks
like a closed idle connection; commands that must never count twice
should also carry a request id, see ``ControlClient.add_and_count``.)
"""

from __future__ import annotations

import functools
import http.client
import io
import itertools
import select
import socket
import ssl
import threading
import weakref
from typing import Any

from .errors import ProtocolError, Timeout, TransportError

__all__ = ["Transport"]

# Errors that mean the peer closed or reset the connection.
_CLOSED = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class _Counter:
    """Bytes read from the socket for the current reply."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class _CountingRaw(io.RawIOBase):
    """A socket reader that counts what it reads, so a reset can be told
    apart from a reset after part of the reply arrived."""

    def __init__(self, raw: Any, counter: _Counter) -> None:
        self._raw = raw
        self._counter = counter

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int | None:
        n: int | None = self._raw.readinto(b)
        if n:
            self._counter.n += n
        return n

    def fileno(self) -> int:
        return int(self._raw.fileno())

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _Response(http.client.HTTPResponse):
    def __init__(
        self,
        sock: socket.socket,
        debuglevel: int = 0,
        method: str | None = None,
        url: str | None = None,
        *,
        counter: _Counter,
    ) -> None:
        super().__init__(sock, debuglevel, method, url)
        # Replace the reader http.client made with one that counts bytes.
        self.fp.close()
        self.fp = io.BufferedReader(_CountingRaw(sock.makefile("rb", buffering=0), counter))


class _ConnMixin:
    """What both connection classes add: TCP_NODELAY, the byte counter and
    the number of replies served since the socket was opened."""

    sock: Any
    counter: _Counter
    served: int
    on_connect: Any
    response_class: Any

    def _setup(self, on_connect: Any) -> None:
        self.counter = _Counter()
        self.served = 0
        self.on_connect = on_connect
        self.response_class = functools.partial(_Response, counter=self.counter)

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # an option the platform lacks costs latency, not correctness
        self.served = 0
        self.on_connect()


class _HTTPConnection(_ConnMixin, http.client.HTTPConnection):
    def __init__(self, host: str, port: int, timeout: float | None, on_connect: Any) -> None:
        http.client.HTTPConnection.__init__(self, host, port, timeout=timeout)
        self._setup(on_connect)


class _HTTPSConnection(_ConnMixin, http.client.HTTPSConnection):
    def __init__(
        self, host: str, port: int, timeout: float | None, context: ssl.SSLContext, on_connect: Any
    ) -> None:
        http.client.HTTPSConnection.__init__(self, host, port, timeout=timeout, context=context)
        self._setup(on_connect)


def _stale(sock: Any) -> bool:
    """Whether an idle kept-alive socket is unusable: anything readable
    before a request is sent is the server's close (EOF) or junk."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    try:
        if hasattr(select, "poll"):
            p = select.poll()
            p.register(sock, select.POLLIN | select.POLLPRI)
            return bool(p.poll(0))
        r, _, _ = select.select([sock], [], [], 0)
        return bool(r)
    except (OSError, ValueError):
        return True


class _Slot:
    """A thread's connection, held by its thread-local: when the thread
    ends the slot goes, and its finalizer closes the socket."""

    __slots__ = ("conn", "__weakref__")

    def __init__(self, conn: Any) -> None:
        self.conn = conn


def _release(conns: dict[int, Any], lock: threading.Lock, n: int, conn: Any) -> None:
    with lock:
        conns.pop(n, None)
    conn.close()


class Transport:
    """Sends requests to one server over kept-alive connections, one per
    calling thread. Safe for concurrent use; :meth:`close` closes every
    thread's connection and must not race with requests in flight.

    ``connections_opened`` counts the TCP connections made so far.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 17102,
        *,
        token: str | None = None,
        tls: bool | ssl.SSLContext = False,
        ca_file: str | None = None,
        timeout: float | None = 5.0,
    ) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self._ssl: ssl.SSLContext | None
        if isinstance(tls, ssl.SSLContext):
            self._ssl = tls
        elif tls or ca_file:
            self._ssl = ssl.create_default_context(cafile=ca_file)
        else:
            self._ssl = None
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._local = threading.local()
        self._lock = threading.Lock()
        # Every live thread's connection, for close(); a thread's entry
        # goes (and its socket is closed) when the thread ends.
        self._conns: dict[int, Any] = {}
        self._ids = itertools.count()
        self._closed = False
        self.connections_opened = 0

    @property
    def tls(self) -> bool:
        return self._ssl is not None

    def _opened(self) -> None:
        with self._lock:
            self.connections_opened += 1

    def _connection(self) -> Any:
        if self._closed:
            raise TransportError("the client is closed")
        slot = getattr(self._local, "slot", None)
        if slot is None:
            conn: Any
            if self._ssl is not None:
                conn = _HTTPSConnection(self.host, self.port, self.timeout, self._ssl, self._opened)
            else:
                conn = _HTTPConnection(self.host, self.port, self.timeout, self._opened)
            slot = _Slot(conn)
            n = next(self._ids)
            with self._lock:
                self._conns[n] = conn
            weakref.finalize(slot, _release, self._conns, self._lock, n, conn)
            self._local.slot = slot
        conn = slot.conn
        if conn.sock is not None and _stale(conn.sock):
            conn.close()  # the next request reconnects (served resets to 0)
        return conn

    def _drop(self, conn: Any) -> None:
        conn.close()

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        """Sends one request; returns the HTTP status and the reply body."""
        for attempt in (0, 1):
            conn = self._connection()
            reused = conn.sock is not None and conn.served > 0
            conn.counter.n = 0
            try:
                conn.request(method, path, body, self._headers)
            except TimeoutError as e:
                self._drop(conn)
                raise Timeout(f"sending {path}: {e}") from e
            except _CLOSED as e:
                self._drop(conn)
                if reused and attempt == 0:
                    continue  # a dead kept-alive connection: nothing was read
                raise TransportError(f"sending {path}: {e}") from e
            except OSError as e:
                self._drop(conn)
                raise TransportError(f"sending {path} to {self.host}:{self.port}: {e}") from e
            try:
                resp = conn.getresponse()
                data = resp.read()
            except TimeoutError as e:
                self._drop(conn)
                raise Timeout(f"waiting for {path}: {e}") from e
            except _CLOSED as e:  # http.client.RemoteDisconnected is one
                got = conn.counter.n
                self._drop(conn)
                if reused and attempt == 0 and got == 0:
                    continue  # closed before any byte of the reply
                raise TransportError(f"reading {path}: {e}") from e
            except http.client.IncompleteRead as e:
                self._drop(conn)
                raise TransportError(f"reading {path}: the reply was cut short") from e
            except http.client.HTTPException as e:
                self._drop(conn)
                raise ProtocolError(f"reading {path}: {e!r}") from e
            except OSError as e:
                self._drop(conn)
                raise TransportError(f"reading {path}: {e}") from e
            conn.served += 1
            if resp.will_close:
                self._drop(conn)
            return resp.status, data
        raise AssertionError("unreachable")  # pragma: no cover

    def current_socket(self) -> Any:
        """The calling thread's open socket, or None (for diagnostics:
        the same object across requests means the connection was kept)."""
        slot = getattr(self._local, "slot", None)
        return slot.conn.sock if slot is not None else None

    def local_address(self) -> tuple[str, int] | None:
        """The calling thread's connection's local address, or None when it
        has none open."""
        slot = getattr(self._local, "slot", None)
        conn = slot.conn if slot is not None else None
        if conn is None or conn.sock is None:
            return None
        addr = conn.sock.getsockname()
        return addr[0], addr[1]

    def close(self) -> None:
        """Closes every thread's connection; later requests fail."""
        self._closed = True
        with self._lock:
            conns = list(self._conns.values())
            self._conns.clear()
        for c in conns:
            c.close()
