"""The command-surface plugin: Feast rows over /batch_execute."""

from __future__ import annotations

import ssl
import struct
import threading
from typing import Any, Dict, List, Literal, Optional, Tuple

from feast import RepoConfig
from feast.infra.supported_async_methods import SupportedAsyncMethods
from feast.protos.feast.types.Value_pb2 import Value as ValueProto
from feast.repo_config import FeastConfigBaseModel
from pydantic import StrictStr

from feast_temporalstore import _layout
from feast_temporalstore._common import Read, Row, RowStore, chunks, view_name

from ._http import Transport

# Tracking sets a project's row keys are spread over (track_keys_for_teardown).
TRACK_SETS = 1024
# Prefixes of the plugin's own keys beside the rows. A v3 entity key starts
# with its key count (u32 LE); these read as counts of billions, so no row
# key is taken for one, and the project ends each, so a suffix scan finds them.
HISTORY_PREFIX = b"\x00fh\x00"
TRACK_PREFIX = b"\x00ft\x00"
# Above this fraction of stale rows (a moving average a thread), a write
# reads the stored event times first and sends only the newer rows.
PREFETCH_ABOVE = 0.5
_EWMA = 0.3
# Keys a scan request looks at: the suffix filter runs on the server, so a
# large page costs few round trips and little transfer.
_SCAN_COUNT = 10_000


class TemporalStoreCommandOnlineStoreConfig(FeastConfigBaseModel):
    """``online_store: {type: feast_temporalstore_command.TemporalStoreCommandOnlineStore, ...}``."""

    type: Literal[
        "feast_temporalstore_command.TemporalStoreCommandOnlineStore",
        "feast_temporalstore_command._store.TemporalStoreCommandOnlineStore",
    ] = "feast_temporalstore_command.TemporalStoreCommandOnlineStore"

    host: StrictStr = "127.0.0.1"
    port: int = 17102
    shard_id: Optional[int] = None
    """Accepted for configurations of TemporalStore's Rust implementation;
    the server routes by key."""
    namespace: Optional[StrictStr] = None
    table_name: Optional[StrictStr] = None
    """The server table (its commit mode, async or durable, is the table's);
    None is the default table."""
    encoding: Literal["msgpack", "json"] = "msgpack"
    token: Optional[StrictStr] = None
    """A bearer token, when the server has tokens."""
    tls: bool = False
    tls_ca_file: Optional[StrictStr] = None
    """CA bundle to verify the server with (tls); None uses the system's."""
    timeout_seconds: float = 5.0
    max_commands_per_request: int = 4096
    """Rows of one row_write_batch, and reads of one request, at most."""
    key_ttl_seconds: Optional[int] = None
    write_feature_history: bool = False
    """Also append each accepted numeric feature to a series per (project,
    view, entity, feature) at its event time, queryable with the engine's
    window aggregates."""
    track_keys_for_teardown: bool = False
    """Record row keys in tracking sets so teardown reads them instead of
    scanning the keyspace."""
    adaptive_timestamp_prefetch: bool = True
    """When most of a thread's recent rows were stale, read the stored event
    times first and send only the newer rows (synchronous writes)."""


def history_key(project: bytes, view: str, feature: str, entity: bytes) -> bytes:
    """The history series of one feature of one entity."""
    v, f = view.encode(), feature.encode()
    return HISTORY_PREFIX + struct.pack("<I", len(v)) + v + struct.pack("<I", len(f)) + f + entity + project


def track_key(project: bytes, bucket: int) -> bytes:
    return TRACK_PREFIX + struct.pack("<I", bucket) + project


def parse_own_key(key: bytes, project: bytes) -> Optional[str]:
    """"row", "history" or "track" for the project's keys of each kind, None
    for anything else (another project's, say)."""
    if key.startswith(HISTORY_PREFIX):
        try:
            pos = len(HISTORY_PREFIX)
            for _ in range(2):
                (n,) = struct.unpack_from("<I", key, pos)
                pos += 4 + n
            return "history" if _layout.in_project(key[pos:], project) else None
        except struct.error:
            return None
    if key.startswith(TRACK_PREFIX):
        return "track" if len(key) >= len(TRACK_PREFIX) + 4 and key[len(TRACK_PREFIX) + 4 :] == project else None
    return "row" if _layout.in_project(key, project) else None


def numeric(v: ValueProto) -> Optional[bytes]:
    """A feature's value as decimal ASCII, or None when it is not a number."""
    which = v.WhichOneof("val")
    if which in ("int32_val", "int64_val", "unix_timestamp_val"):
        return str(getattr(v, which)).encode()
    if which in ("float_val", "double_val"):
        return repr(float(getattr(v, which))).encode()
    if which == "bool_val":
        return b"1" if v.bool_val else b"0"
    return None


class TemporalStoreCommandOnlineStore(RowStore):
    """Feast online store on TemporalStore's HTTP command surface: one
    conditional row_write_batch per chunk of rows (stale rows refused
    server-side, their TTL untouched) and one request for all views' reads."""

    def __init__(self) -> None:
        super().__init__()
        self._transport: Optional[Transport] = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self._names: Dict[str, Dict[bytes, str]] = {}

    @property
    def async_supported(self) -> SupportedAsyncMethods:
        return SupportedAsyncMethods(read=True, write=True)

    def _cfg(self, config: RepoConfig) -> TemporalStoreCommandOnlineStoreConfig:
        cfg = config.online_store
        assert isinstance(cfg, TemporalStoreCommandOnlineStoreConfig), type(cfg)
        return cfg

    def transport(self, config: RepoConfig) -> Transport:
        if self._transport is None:
            with self._lock:
                if self._transport is None:
                    cfg = self._cfg(config)
                    ctx = None
                    if cfg.tls:
                        ctx = ssl.create_default_context(cafile=cfg.tls_ca_file)
                    self._transport = Transport(
                        cfg.host, cfg.port, encoding=cfg.encoding, token=cfg.token, tls=ctx, timeout=cfg.timeout_seconds
                    )
        return self._transport

    def _extra(self, cfg: TemporalStoreCommandOnlineStoreConfig) -> Dict[str, Any]:
        extra: Dict[str, Any] = {}
        if cfg.namespace:
            extra["namespace"] = cfg.namespace
        if cfg.table_name:
            extra["table_name"] = cfg.table_name
        if cfg.shard_id is not None:
            extra["shard_id"] = cfg.shard_id
        return extra

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def _run(self, config: RepoConfig, cmds: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Runs cmds in requests of at most max_commands_per_request; every
        reply, in order."""
        cfg, t = self._cfg(config), self.transport(config)
        out: List[Dict[str, Any]] = []
        for part in chunks(cmds, cfg.max_commands_per_request):
            out += t.batch(list(part), self._extra(cfg))
        return out

    async def _run_async(self, config: RepoConfig, cmds: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        cfg, t = self._cfg(config), self.transport(config)
        out: List[Dict[str, Any]] = []
        for part in chunks(cmds, cfg.max_commands_per_request):
            out += await t.batch_async(list(part), self._extra(cfg))
        return out

    # -- writes ------------------------------------------------------------

    def _write_command(self, config: RepoConfig, view: str, rows: List[Row]) -> Dict[str, Any]:
        """The conditional write of rows (at most max_commands_per_request)."""
        cmd: Dict[str, Any] = {
            "kind": "row_write_batch", "ts_field": _layout.ts_field(view), "ts_format": "proto",
            "rows": [{"key": k, "args": [x for fv in fields for x in fv], "event_time_ns": ns} for k, fields, ns in rows],
        }
        ttl = self._cfg(config).key_ttl_seconds
        if ttl:
            cmd["ttl_ms"] = ttl * 1000
        return cmd

    def _stale_rate(self) -> float:
        return getattr(self._local, "stale", 0.0)

    def _observe(self, sent: int, stale: int) -> None:
        if sent:
            self._local.stale = (1 - _EWMA) * self._stale_rate() + _EWMA * (stale / sent)

    def _prefetch_plan(self, cfg, view: str, rows: List[Row]) -> Optional[List[Dict[str, Any]]]:
        if not cfg.adaptive_timestamp_prefetch or self._stale_rate() <= PREFETCH_ABOVE:
            return None
        ts = _layout.ts_field(view).encode()
        return [{"kind": "row_read_batch", "keys": [k for k, _, _ in rows], "args": [ts]}]

    @staticmethod
    def _drop_stale(rows: List[Row], replies: List[Dict[str, Any]], codec) -> List[Row]:
        """The rows newer than what the server holds (replies: the stored
        event time of each row) and than earlier rows of the batch (the
        server judges the survivors again, atomically)."""
        latest: Dict[bytes, int] = {}
        keep = []
        stored = codec.values(replies[0].get("values"))
        for (key, fields, ns), raw in zip(rows, stored):
            seen = latest.get(key)
            if seen is None:
                if raw is not None:
                    seen = _layout.decode_timestamp(raw)
            if seen is not None and ns <= seen:
                continue
            latest[key] = ns
            keep.append((key, fields, ns))
        return keep

    def _after_write(self, config: RepoConfig, view: str, rows: List[Row], written: List[int]) -> List[Dict[str, Any]]:
        """The history appends and tracking adds of the written rows."""
        cfg = self._cfg(config)
        project = config.project.encode("utf-8")
        cmds: List[Dict[str, Any]] = []
        tracked: List[bytes] = []
        if cfg.write_feature_history:
            names = self._names.get(view, {})
            for (key, fields, ns), w in zip(rows, written):
                if not w:
                    continue
                entity = key[: len(key) - len(project)]
                for f, raw in fields:
                    v = ValueProto()
                    v.ParseFromString(raw)
                    num = numeric(v)
                    if num is None or f not in names:
                        continue
                    hk = history_key(project, view, names[f], entity)
                    tracked.append(hk)
                    cmds.append({
                        "kind": "feature_append_with_policy", "policy": "upsert", "key": hk,
                        "points": [{"timestamp_ms": ns // 1_000_000, "value": num}],
                    })
        if cfg.track_keys_for_teardown:
            tracked += [key for (key, _, _), w in zip(rows, written) if w]
            sets: Dict[int, List[bytes]] = {}
            for key in tracked:
                sets.setdefault(_layout.bucket(key, TRACK_SETS), []).append(key)
            cmds += [{"kind": "sadd", "key": track_key(project, b), "args": ks} for b, ks in sets.items()]
        return cmds

    def online_write_batch(self, config, table, data, progress) -> None:
        self._remember_names(config, table)
        super().online_write_batch(config, table, data, progress)

    async def online_write_batch_async(self, config, table, data, progress) -> None:
        self._remember_names(config, table)
        await super().online_write_batch_async(config, table, data, progress)

    def _remember_names(self, config, table) -> None:
        """Keeps the view's field hash → feature name, which history keys
        are named by (a write's rows carry only the hashes)."""
        if self._cfg(config).write_feature_history:
            view = view_name(table, config)
            if view not in self._names:
                self._names[view] = {_layout.field_hash(view, f.name): f.name for f in table.features}

    def _write(self, config: RepoConfig, view: str, rows: List[Row]) -> int:
        cfg = self._cfg(config)
        t = self.transport(config)
        extra = self._extra(cfg)
        written = 0
        for part in chunks(rows, cfg.max_commands_per_request):
            part = list(part)
            pre = self._prefetch_plan(cfg, view, part)
            if pre is not None:
                before = len(part)
                part = self._drop_stale(part, t.batch(pre, extra), t.codec)
                self._observe(before, before - len(part))
                if not part:
                    continue
            [r] = t.batch([self._write_command(config, view, part)], extra)
            flags = r.get("integers") or []
            written += sum(flags)
            if pre is None:
                self._observe(len(part), len(part) - sum(flags))
            self._run(config, self._after_write(config, view, part, flags))
        return written

    async def _write_async(self, config: RepoConfig, view: str, rows: List[Row]) -> int:
        cfg = self._cfg(config)
        t = self.transport(config)
        extra = self._extra(cfg)
        written = 0
        for part in chunks(rows, cfg.max_commands_per_request):
            part = list(part)
            [r] = await t.batch_async([self._write_command(config, view, part)], extra)
            flags = r.get("integers") or []
            written += sum(flags)
            await self._run_async(config, self._after_write(config, view, part, flags))
        return written

    # -- reads -------------------------------------------------------------

    @staticmethod
    def _read_commands(reads: List[Read], limit: int) -> Tuple[List[Dict[str, Any]], List[Tuple[int, int]]]:
        """One row_read_batch per run of reads asking the same fields (a
        feature view's), of at most limit rows; each command's first read
        and field count, to split its flat values back into rows."""
        cmds: List[Dict[str, Any]] = []
        spans: List[Tuple[int, int]] = []
        for i, (key, fields) in enumerate(reads):
            if cmds and cmds[-1]["args"] is fields and len(cmds[-1]["keys"]) < limit:
                cmds[-1]["keys"].append(key)
                continue
            cmds.append({"kind": "row_read_batch", "keys": [key], "args": fields})
            spans.append((i, len(fields)))
        return cmds, spans

    @staticmethod
    def _split_rows(codec, replies: List[Dict[str, Any]], cmds, spans) -> List[List[Optional[bytes]]]:
        out: List[List[Optional[bytes]]] = []
        for r, cmd, (_, nf) in zip(replies, cmds, spans):
            vals = codec.values(r.get("values"))
            out += [vals[i : i + nf] for i in range(0, len(cmd["keys"]) * nf, nf)]
        return out

    def _hmget(self, config: RepoConfig, reads: List[Read]) -> List[List[Optional[bytes]]]:
        cmds, spans = self._read_commands(reads, self._cfg(config).max_commands_per_request)
        return self._split_rows(self.transport(config).codec, self._run(config, cmds), cmds, spans)

    async def _hmget_async(self, config: RepoConfig, reads: List[Read]) -> List[List[Optional[bytes]]]:
        cmds, spans = self._read_commands(reads, self._cfg(config).max_commands_per_request)
        return self._split_rows(self.transport(config).codec, await self._run_async(config, cmds), cmds, spans)

    # -- deletes -----------------------------------------------------------

    def _scan_suffix(self, config: RepoConfig) -> List[bytes]:
        cfg = self._cfg(config)
        t = self.transport(config)
        project = config.project.encode("utf-8")
        keys, cursor = [], 0
        while True:
            [r] = t.batch([{"kind": "scan", "cursor": cursor, "count": _SCAN_COUNT, "suffix": project}], self._extra(cfg))
            keys += t.codec.keys(r.get("keys"))
            cursor = r.get("cursor") or 0
            if not cursor:
                return keys

    def _project_keys(self, config: RepoConfig) -> List[bytes]:
        return self._scan_suffix(config)

    def _members(self, config: RepoConfig, kind: str, keys: List[bytes]) -> List[List[bytes]]:
        """Each key's members by kind (hkeys, smembers)."""
        codec = self.transport(config).codec
        return [codec.keys(r.get("members")) for r in self._run(config, [{"kind": kind, "key": k} for k in keys])]

    def _hkeys(self, config: RepoConfig, keys: List[bytes]) -> List[List[bytes]]:
        return self._members(config, "hkeys", keys)

    def _delete(self, config: RepoConfig, keys: List[bytes]) -> None:
        n = self._cfg(config).max_commands_per_request
        self._run(config, [{"kind": "delete_keys", "keys": list(part)} for part in chunks(keys, n)])

    def _hdel(self, config: RepoConfig, key_fields: List[Tuple[bytes, List[bytes]]]) -> None:
        self._run(config, [{"kind": "hdel", "key": k, "args": f} for k, f in key_fields])

    def _tracked(self, config: RepoConfig) -> List[bytes]:
        project = config.project.encode("utf-8")
        sets = [track_key(project, b) for b in range(TRACK_SETS)]
        return [k for members in self._members(config, "smembers", sets) for k in members] + sets

    def teardown(self, config: RepoConfig, tables, entities) -> None:
        project = config.project.encode("utf-8")
        if self._cfg(config).track_keys_for_teardown:
            keys = self._tracked(config)
        else:
            keys = [k for k in self._scan_suffix(config) if parse_own_key(k, project)]
        self._delete(config, keys)
