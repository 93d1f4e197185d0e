"""Feast online store on TemporalStore's HTTP command surface.

Rows keep Feast's Redis layout (shared with ``feast_temporalstore`` and with
Feast's own Redis store), written with the server's conditional
``row_write_batch``: a stale row is refused on the server, atomically, and
its TTL is not renewed. All views of a ``get_online_features`` call are read
in one request.
"""

from ._store import (
    TemporalStoreCommandOnlineStore,
    TemporalStoreCommandOnlineStoreConfig,
    history_key,
)

__all__ = ["TemporalStoreCommandOnlineStore", "TemporalStoreCommandOnlineStoreConfig", "history_key"]
