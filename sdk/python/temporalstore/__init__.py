"""TemporalStore client for the server's HTTP command surface.

Stdlib only. :class:`Client` sends raw commands (dicts) to ``/execute``
and ``/batch_execute``; :class:`FeatureClient` adds typed calls for
feature serving (event-time rows, history series, plain keys);
:class:`ControlClient` adds control state (frequency caps, quotas, budget
gates, pacing, selections). Failures raise :class:`TemporalStoreError`
subclasses carrying the server's status ``code``.
"""

from .client import Client, as_bytes, now_ms
from .control import ControlClient, PaceResult, QuotaResult
from .errors import (
    AdmissionRejected,
    AuthError,
    BadRequest,
    Forbidden,
    InvalidArgument,
    NotFound,
    NotInteger,
    ProtocolError,
    ServerError,
    TableNotFound,
    TemporalStoreError,
    Timeout,
    TooLarge,
    TransportError,
    Unauthorized,
    Unsupported,
    WrongType,
)
from .features import AggregateValue, FeatureClient, Row, window
from .transport import Transport

__version__ = "0.1.0"

__all__ = [
    "Client",
    "FeatureClient",
    "ControlClient",
    "Row",
    "QuotaResult",
    "PaceResult",
    "AggregateValue",
    "Transport",
    "as_bytes",
    "now_ms",
    "window",
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
    "__version__",
]
