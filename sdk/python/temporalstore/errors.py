"""Exceptions raised by the TemporalStore client.

Every failure is a :class:`TemporalStoreError` carrying ``code``, the
server's status code string (``invalid_argument``, ``wrong_type``,
``unauthorized``, ...), so callers can branch on it without parsing
messages. Codes with their own subclass are listed in ``_BY_CODE``; any
other code raises the base class with that code. Failures below HTTP
(connection refused, reset, timeout) are :class:`TransportError`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "TemporalStoreError",
    "BadRequest",
    "AuthError",
    "Unauthorized",
    "Forbidden",
    "InvalidArgument",
    "WrongType",
    "NotFound",
    "NotInteger",
    "TableNotFound",
    "TooLarge",
    "Unsupported",
    "AdmissionRejected",
    "ServerError",
    "TransportError",
    "Timeout",
    "ProtocolError",
    "error_for",
]


class TemporalStoreError(Exception):
    """A command or request the server (or the connection to it) failed.

    ``code`` is the server's status code; ``message`` its text;
    ``http_status`` the HTTP status of the reply (``None`` when there was
    no reply). In a batch, ``index`` is the position of the failed command
    and ``results`` every command's outcome (responses and errors).
    """

    code: str = "error"

    def __init__(
        self,
        message: str = "",
        *,
        code: str | None = None,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message or (code or self.code))
        if code is not None:
            self.code = code
        self.message = message
        self.http_status = http_status
        self.index: int | None = None
        self.results: list[Any] | None = None

    def __str__(self) -> str:
        text = self.message or self.code
        return f"{self.code}: {text}" if self.message else text


class BadRequest(TemporalStoreError):
    """The server could not understand the request (HTTP 400): a body
    that does not decode, an unknown kind, a missing field."""

    code = "bad_request"


class AuthError(TemporalStoreError):
    """Base of the token failures."""


class Unauthorized(AuthError):
    """No bearer token, or one the server does not accept (HTTP 401)."""

    code = "unauthorized"


class Forbidden(AuthError):
    """A read-only token sent a write, or a batch holding one (HTTP 403);
    nothing of the request ran."""

    code = "forbidden"


class InvalidArgument(TemporalStoreError):
    """The engine refused a command's arguments."""

    code = "invalid_argument"


class WrongType(TemporalStoreError):
    """The key holds another type of value (a hash command on a string,
    a series command on a hash, ...)."""

    code = "wrong_type"


class NotFound(TemporalStoreError):
    """An unknown route, or an expire of a missing key."""

    code = "not_found"


class NotInteger(TemporalStoreError):
    """An integer operation on a value that is not an integer."""

    code = "not_integer"


class TableNotFound(TemporalStoreError):
    """The namespace/table named by the client does not exist."""

    code = "table_not_found"


class TooLarge(TemporalStoreError):
    """A body or batch past the server's limits (HTTP 413), or a value
    past the engine's."""

    code = "too_large"


class Unsupported(TemporalStoreError):
    """A command kind the server understands but does not run."""

    code = "unsupported"


class AdmissionRejected(TemporalStoreError):
    """The table's or tenant's rate limit refused the command."""

    code = "admission_rejected"


class ServerError(TemporalStoreError):
    """The server failed unexpectedly (code ``internal``, or an HTTP 5xx)."""

    code = "internal"


class TransportError(TemporalStoreError):
    """The connection failed: refused, reset or closed mid-reply."""

    code = "transport"


class Timeout(TransportError):
    """No reply within the client's timeout. The command may have run."""

    code = "timeout"


class ProtocolError(TemporalStoreError):
    """The reply was not the JSON the HTTP surface sends."""

    code = "protocol"


_BY_CODE: dict[str, type[TemporalStoreError]] = {
    cls.code: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        InvalidArgument,
        WrongType,
        NotFound,
        NotInteger,
        TableNotFound,
        TooLarge,
        Unsupported,
        AdmissionRejected,
        ServerError,
    )
}


def error_for(code: str, message: str = "", http_status: int | None = None) -> TemporalStoreError:
    """The exception for a failed status: its code's subclass, or the base
    class carrying the code."""
    cls = _BY_CODE.get(code, TemporalStoreError)
    return cls(message, code=code, http_status=http_status)
