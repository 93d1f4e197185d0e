"""Feast online stores on TemporalStore.

``feast_temporalstore.TemporalStoreOnlineStore`` speaks RESP and keeps Feast's
Redis layout byte for byte, so Feast's own ``type: redis`` store reads its
rows and it reads theirs. ``feast_temporalstore_command`` (a sibling package)
talks to the HTTP command surface, with server-side conditional writes.
"""

from ._resp import (
    TemporalStoreOnlineStore,
    TemporalStoreOnlineStoreConfig,
    parse_connection_string,
)

__all__ = ["TemporalStoreOnlineStore", "TemporalStoreOnlineStoreConfig", "parse_connection_string"]
