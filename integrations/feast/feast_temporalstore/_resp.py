"""The RESP plugin: Feast's Redis layout over the Redis protocol."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple

import redis
from pydantic import StrictStr
from redis import asyncio as redis_asyncio

from feast import RepoConfig
from feast.infra.supported_async_methods import SupportedAsyncMethods
from feast.repo_config import FeastConfigBaseModel

from . import _layout
from ._common import Read, Row, RowStore, chunks

# Rows a write pipeline carries at most: bounds the memory of a large
# materialization batch on both sides.
_WRITE_CHUNK = 5000
_SCAN_COUNT = 1000


class TemporalStoreOnlineStoreConfig(FeastConfigBaseModel):
    """``online_store: {type: feast_temporalstore.TemporalStoreOnlineStore, ...}``."""

    type: Literal[
        "feast_temporalstore.TemporalStoreOnlineStore",
        "feast_temporalstore._resp.TemporalStoreOnlineStore",
    ] = "feast_temporalstore.TemporalStoreOnlineStore"

    connection_string: StrictStr = "127.0.0.1:6379"
    """``host:port`` then Redis client parameters, comma separated:
    ``127.0.0.1:6379,db=0,password=secret,ssl=true``."""

    key_ttl_seconds: Optional[int] = None
    """Expire an entity's row this long after its last accepted write
    (a stale write never renews it); None keeps rows."""

    skip_dedup: bool = False
    """Write without reading stored event times first: one round trip, and
    an older row overwrites a newer one."""

    full_scan_for_deletion: bool = True
    """Delete a dropped view's fields on ``feast apply`` (a scan of the
    keyspace); off leaves them."""


def parse_connection_string(s: str) -> Dict[str, Any]:
    """redis.Redis keyword arguments of a Feast connection string."""
    kwargs: Dict[str, Any] = {}
    parts = [p.strip() for p in s.split(",") if p.strip()]
    if not parts or "=" in parts[0]:
        raise ValueError(f"connection_string {s!r}: want host:port first")
    host, _, port = parts[0].rpartition(":")
    kwargs["host"], kwargs["port"] = (host or "127.0.0.1"), int(port or 6379)
    for p in parts[1:]:
        k, _, v = p.partition("=")
        try:
            kwargs[k] = json.loads(v)
        except json.JSONDecodeError:
            kwargs[k] = v
    return kwargs


class TemporalStoreOnlineStore(RowStore):
    """Feast online store on TemporalStore's RESP port (or any Redis)."""

    def __init__(self) -> None:
        super().__init__()
        self._client: Optional[redis.Redis] = None
        self._lock = threading.Lock()
        self._async: Dict[int, Tuple[asyncio.AbstractEventLoop, redis_asyncio.Redis]] = {}

    @property
    def async_supported(self) -> SupportedAsyncMethods:
        return SupportedAsyncMethods(read=True, write=True)

    def _cfg(self, config: RepoConfig) -> TemporalStoreOnlineStoreConfig:
        cfg = config.online_store
        assert isinstance(cfg, TemporalStoreOnlineStoreConfig), type(cfg)
        return cfg

    def client(self, config: RepoConfig) -> redis.Redis:
        """The shared client (redis-py's pool is thread-safe)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = redis.Redis(**parse_connection_string(self._cfg(config).connection_string))
        return self._client

    def async_client(self, config: RepoConfig) -> redis_asyncio.Redis:
        """A client of the running event loop (an asyncio client is bound to
        the loop that made it)."""
        loop = asyncio.get_running_loop()
        got = self._async.get(id(loop))
        if got is None or got[0] is not loop:
            c = redis_asyncio.Redis(**parse_connection_string(self._cfg(config).connection_string))
            self._async[id(loop)] = (loop, c)
            return c
        return got[1]

    # -- writes ------------------------------------------------------------

    def _write(self, config: RepoConfig, view: str, rows: List[Row]) -> int:
        cfg = self._cfg(config)
        c = self.client(config)
        written = 0
        for part in chunks(rows, _WRITE_CHUNK):
            stored: Sequence[Optional[bytes]] = [None] * len(part)
            if not cfg.skip_dedup:
                with c.pipeline(transaction=False) as p:
                    for key, _, _ in part:
                        p.hget(key, _layout.ts_field(view))
                    stored = p.execute()
            with c.pipeline(transaction=False) as p:
                for key, fields, ns in self._accepted(part, stored, cfg.skip_dedup):
                    self._queue_write(p, cfg, view, key, fields, ns)
                    written += 1
                p.execute()
        return written

    async def _write_async(self, config: RepoConfig, view: str, rows: List[Row]) -> int:
        cfg = self._cfg(config)
        c = self.async_client(config)
        written = 0
        for part in chunks(rows, _WRITE_CHUNK):
            stored: Sequence[Optional[bytes]] = [None] * len(part)
            if not cfg.skip_dedup:
                async with c.pipeline(transaction=False) as p:
                    for key, _, _ in part:
                        p.hget(key, _layout.ts_field(view))
                    stored = await p.execute()
            async with c.pipeline(transaction=False) as p:
                for key, fields, ns in self._accepted(part, stored, cfg.skip_dedup):
                    self._queue_write(p, cfg, view, key, fields, ns)
                    written += 1
                await p.execute()
        return written

    @staticmethod
    def _accepted(rows: Sequence[Row], stored: Sequence[Optional[bytes]], skip_dedup: bool):
        """The rows Feast's rule lets through: newer than both the stored
        event time and the newest earlier row of the entity in this batch;
        equal is stale."""
        if skip_dedup:
            yield from rows
            return
        latest: Dict[bytes, int] = {}
        for (key, fields, ns), prev in zip(rows, stored):
            # Feast's Redis store exactly, its zero included: a stored or
            # batch time of 0 (the epoch) does not make a row stale.
            seen = max(_layout.decode_timestamp(prev) or 0 if prev is not None else 0, latest.get(key, 0))
            if seen and ns <= seen:
                continue
            latest[key] = ns
            yield key, fields, ns

    @staticmethod
    def _queue_write(p, cfg: TemporalStoreOnlineStoreConfig, view: str, key: bytes, fields, ns: int) -> None:
        mapping: Dict[bytes, bytes] = {_layout.ts_field(view).encode(): _layout.encode_timestamp(ns)}
        mapping.update(fields)
        p.hset(key, mapping=mapping)
        if cfg.key_ttl_seconds:
            p.expire(key, cfg.key_ttl_seconds)

    # -- reads -------------------------------------------------------------

    def _hmget(self, config: RepoConfig, reads: List[Read]) -> List[List[Optional[bytes]]]:
        with self.client(config).pipeline(transaction=False) as p:
            for key, fields in reads:
                p.hmget(key, fields)
            return p.execute()

    async def _hmget_async(self, config: RepoConfig, reads: List[Read]) -> List[List[Optional[bytes]]]:
        async with self.async_client(config).pipeline(transaction=False) as p:
            for key, fields in reads:
                p.hmget(key, fields)
            return await p.execute()

    # -- deletes -----------------------------------------------------------

    def _project_keys(self, config: RepoConfig) -> List[bytes]:
        # The glob narrows the scan; _own_keys then keeps exact matches.
        pattern = b"*" + _layout.escape_glob(config.project.encode("utf-8"))
        return list(self.client(config).scan_iter(match=pattern, count=_SCAN_COUNT))

    def _hkeys(self, config: RepoConfig, keys: List[bytes]) -> List[List[bytes]]:
        with self.client(config).pipeline(transaction=False) as p:
            for k in keys:
                p.hkeys(k)
            return p.execute()

    def _delete(self, config: RepoConfig, keys: List[bytes]) -> None:
        c = self.client(config)
        for part in chunks(keys, 1000):
            c.delete(*part)

    def _hdel(self, config: RepoConfig, key_fields: List[Tuple[bytes, List[bytes]]]) -> None:
        with self.client(config).pipeline(transaction=False) as p:
            for k, fields in key_fields:
                p.hdel(k, *fields)
            p.execute()

    def update(self, config, tables_to_delete, tables_to_keep, entities_to_delete, entities_to_keep, partial) -> None:
        if self._cfg(config).full_scan_for_deletion:
            super().update(config, tables_to_delete, tables_to_keep, entities_to_delete, entities_to_keep, partial)
