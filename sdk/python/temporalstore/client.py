"""The raw client: commands as dicts, sent to ``/execute`` and
``/batch_execute``.

A command is a dict with ``kind`` and that kind's fields, as the HTTP
surface documents them (``{"kind": "get", "key": "k"}``). ``bytes`` found
anywhere in a raw command are sent as arrays of numbers 0..255, which both
payload and name fields accept. Replies come back as decoded JSON: the
``response`` object of each command, bytes as arrays of numbers (see
:func:`temporalstore.as_bytes`). :class:`~temporalstore.FeatureClient` and
:class:`~temporalstore.ControlClient` build on this with typed methods.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from ._codec import from_wire_bytes, raw_default
from .errors import ProtocolError, ServerError, TemporalStoreError, error_for
from .transport import Transport

__all__ = ["Client", "as_bytes", "now_ms"]


def now_ms() -> int:
    """This machine's clock in Unix milliseconds: the default ``at`` of
    time-stamped commands."""
    return time.time_ns() // 1_000_000


def as_bytes(v: Any) -> bytes | None:
    """A raw reply's bytes field (an array of numbers) as ``bytes``;
    ``None`` stays ``None``."""
    return from_wire_bytes(v)


class Client:
    """A connection to one TemporalStore server's HTTP command surface.

    ``token`` is sent as ``Authorization: Bearer <token>``. ``tls`` is an
    ``ssl.SSLContext``, or True to verify against the system's CAs, or
    ``ca_file`` (which implies TLS). ``timeout`` bounds each socket
    operation, in seconds. ``namespace`` and ``table`` address a table
    other than the default; ``tenant`` tags commands for per-tenant
    limits. Safe to share between threads: each thread keeps its own
    connection.
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
        namespace: str | None = None,
        table: str | None = None,
        tenant: str | None = None,
    ) -> None:
        self.transport = Transport(host, port, token=token, tls=tls, ca_file=ca_file, timeout=timeout)
        self._scope: dict[str, str] = {}
        if namespace:
            self._scope["namespace"] = namespace
        if table:
            self._scope["table_name"] = table
        if tenant:
            self._scope["tenant"] = tenant

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "Client":
        """A client for ``http://host:port`` or ``https://host:port``."""
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if u.scheme == "https":
            kwargs.setdefault("tls", True)
        port = u.port or (443 if u.scheme == "https" else 80)
        return cls(u.hostname, port, **kwargs)

    # Context manager and lifetime.

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the client's connections."""
        self.transport.close()

    # Requests.

    def _post(self, path: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        body = json.dumps(payload, separators=(",", ":"), default=raw_default).encode("utf-8")
        status, data = self.transport.request("POST", path, body)
        try:
            doc = json.loads(data)
        except ValueError:
            if status >= 500:  # a proxy or a crashed handler, not the surface's JSON
                raise ServerError(
                    f"HTTP {status} from {path}: {data[:200]!r}", code=f"http_{status}", http_status=status
                ) from None
            raise ProtocolError(
                f"HTTP {status} from {path} is not JSON: {data[:200]!r}", http_status=status
            ) from None
        if not isinstance(doc, dict):
            raise ProtocolError(f"HTTP {status} from {path}: unexpected reply {doc!r:.200}", http_status=status)
        return status, doc

    @staticmethod
    def _failure(st: Any, status: int) -> TemporalStoreError | None:
        """The error a status object stands for, None when it is ok."""
        if not isinstance(st, dict):
            return ProtocolError(f"HTTP {status}: reply without a status object", http_status=status)
        if st.get("ok") is True:
            return None
        code = st.get("code") or f"http_{status}"
        return error_for(str(code), str(st.get("message") or ""), status)

    def execute(self, command: Mapping[str, Any]) -> dict[str, Any]:
        """Runs one command; returns its ``response`` object. A failed
        command raises its :class:`TemporalStoreError`."""
        payload: dict[str, Any] = dict(self._scope)
        payload["command"] = dict(command)
        status, doc = self._post("/execute", payload)
        err = self._failure(doc.get("status"), status)
        if err is not None:
            raise err
        resp = doc.get("response")
        if not isinstance(resp, dict):
            raise ProtocolError(f"HTTP {status}: reply without a response object", http_status=status)
        return resp

    def batch(
        self, commands: Sequence[Mapping[str, Any]], *, raise_on_error: bool = True
    ) -> list[Any]:
        """Runs commands in order in one request, each with its own status.

        Returns each command's ``response`` object. A failed command does
        not stop the others; with ``raise_on_error`` the first failure is
        raised once all have run, its ``index`` and ``results`` (every
        command's response or error) set; without it, failures are
        returned in place as :class:`TemporalStoreError` values. A batch the
        server refuses whole (bad request, token) raises and ran nothing.
        """
        if not commands:
            return []
        payload: dict[str, Any] = dict(self._scope)
        payload["commands"] = [dict(c) for c in commands]
        status, doc = self._post("/batch_execute", payload)
        # A batch refused whole is answered with a bare status object.
        err = self._failure(doc.get("status") if "status" in doc else doc, status)
        if err is not None:
            raise err
        replies = doc.get("responses")
        if not isinstance(replies, list) or len(replies) != len(commands):
            raise ProtocolError(
                f"batch of {len(commands)} answered with {len(replies) if isinstance(replies, list) else 'no'} responses",
                http_status=status,
            )
        results: list[Any] = []
        first: TemporalStoreError | None = None
        for i, r in enumerate(replies):
            e = self._failure(r.get("status") if isinstance(r, dict) else None, status)
            if e is None:
                results.append(r.get("response") or {})
                continue
            e.index = i
            e.results = results
            results.append(e)
            if first is None:
                first = e
        if first is not None and raise_on_error:
            raise first
        return results

    def health(self) -> bool:
        """Whether the server answers ``/health`` (liveness only)."""
        status, _ = self.transport.request("GET", "/health")
        return status == 200

    def metrics(self) -> str:
        """The server's Prometheus metrics text (``/metrics``)."""
        status, data = self.transport.request("GET", "/metrics")
        if status != 200:
            try:
                doc = json.loads(data)
            except ValueError:
                doc = {}
            err = self._failure(doc if isinstance(doc, dict) and "ok" in doc else {"code": f"http_{status}"}, status)
            raise err if err is not None else ProtocolError(f"HTTP {status} from /metrics", http_status=status)
        return data.decode("utf-8", "replace")

    def _run(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Executes kind with the fields that are not None."""
        cmd = {"kind": kind}
        for k, v in fields.items():
            if v is not None:
                cmd[k] = v
        return self.execute(cmd)
