"""What both plugins share: Feast's side of a write, a read and a delete,
over a transport each plugin provides (RESP, or the HTTP command surface).

A subclass provides ``_write(config, view, rows)`` (rows are ``(key,
fields, event_ns)`` with fields a list of (field, value) pairs; it returns
how many were written), ``_hmget(config, reads)`` and its async twin,
``_project_keys(config)``, ``_hkeys(config, keys)``, ``_delete(config,
keys)`` and ``_hdel(config, key_fields)``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from feast import Entity, FeatureView, RepoConfig, utils
from feast.infra.online_stores.helpers import compute_versioned_name
from feast.infra.online_stores.online_store import OnlineStore
from feast.protos.feast.types.EntityKey_pb2 import EntityKey as EntityKeyProto
from feast.protos.feast.types.Value_pb2 import Value as ValueProto

from . import _layout

Row = Tuple[bytes, List[Tuple[bytes, bytes]], int]
Read = Tuple[bytes, List[bytes]]


def view_name(table: FeatureView, config: RepoConfig) -> str:
    """The view's name in its fields: ``fv_v{N}`` under online versioning."""
    return compute_versioned_name(table, config.registry.enable_online_feature_view_versioning)


class FieldCache:
    """The hash fields of (view, features), computed once: a read then
    only looks them up."""

    def __init__(self) -> None:
        self._cache: Dict[Tuple[str, Tuple[str, ...]], List[bytes]] = {}

    def fields(self, view: str, features: Sequence[str]) -> List[bytes]:
        k = (view, tuple(features))
        f = self._cache.get(k)
        if f is None:
            if len(self._cache) > 4096:
                self._cache.clear()
            f = _layout.view_fields(view, features) + [_layout.ts_field(view).encode()]
            self._cache[k] = f
        return f


def to_row(values: Sequence[Optional[bytes]], features: Sequence[str]):
    """A read's (event time, {feature: ValueProto}) from HMGET's values
    (the features' then the view's ``_ts``): (None, None) when the view
    has no row for the entity (NOT_FOUND, where Feast's Redis store says
    PRESENT and null); a missing field is left out (NOT_FOUND); an empty
    value is a present null."""
    ts = values[-1]
    if ts is None:
        return None, None
    res: Dict[str, ValueProto] = {}
    for name, raw in zip(features, values):
        if raw is not None:
            res[name] = ValueProto.FromString(raw)
    return _layout.timestamp_datetime(ts), res


class RowStore(OnlineStore):
    """The OnlineStore methods over a subclass's transport."""

    def __init__(self) -> None:
        super().__init__()
        self._fields = FieldCache()

    # -- writes ------------------------------------------------------------

    def _rows(self, config: RepoConfig, table: FeatureView, data) -> Tuple[str, List[Row]]:
        view = view_name(table, config)
        project = config.project.encode("utf-8")
        rows: List[Row] = []
        hashes: Dict[str, bytes] = {}
        for entity_key, values, timestamp, _created in data:
            key = _layout.entity_key_bytes(entity_key) + project
            fields = []
            for name, v in values.items():
                f = hashes.get(name)
                if f is None:
                    f = hashes[name] = _layout.field_hash(view, name)
                fields.append((f, v.SerializeToString()))
            rows.append((key, fields, _layout.to_nanos(timestamp)))
        return view, rows

    def online_write_batch(
        self,
        config: RepoConfig,
        table: FeatureView,
        data: List[Tuple[EntityKeyProto, Dict[str, ValueProto], datetime, Optional[datetime]]],
        progress: Optional[Callable[[int], Any]],
    ) -> None:
        view, rows = self._rows(config, table, data)
        self._write(config, view, rows)
        if progress:
            progress(len(rows))

    async def online_write_batch_async(
        self,
        config: RepoConfig,
        table: FeatureView,
        data: List[Tuple[EntityKeyProto, Dict[str, ValueProto], datetime, Optional[datetime]]],
        progress: Optional[Callable[[int], Any]],
    ) -> None:
        view, rows = self._rows(config, table, data)
        await self._write_async(config, view, rows)
        if progress:
            progress(len(rows))

    async def _write_async(self, config: RepoConfig, view: str, rows: List[Row]) -> int:
        return await asyncio.to_thread(self._write, config, view, rows)

    # -- reads -------------------------------------------------------------

    def _plan(self, config: RepoConfig, table: FeatureView, entity_keys, requested_features):
        view = view_name(table, config)
        features = list(requested_features) if requested_features else [f.name for f in table.features]
        fields = self._fields.fields(view, features)
        project = config.project.encode("utf-8")
        reads = [(_layout.entity_key_bytes(ek) + project, fields) for ek in entity_keys]
        return features, reads

    def online_read(
        self,
        config: RepoConfig,
        table: FeatureView,
        entity_keys: List[EntityKeyProto],
        requested_features: Optional[List[str]] = None,
    ) -> List[Tuple[Optional[datetime], Optional[Dict[str, ValueProto]]]]:
        features, reads = self._plan(config, table, entity_keys, requested_features)
        return [to_row(v, features) for v in self._hmget(config, reads)]

    async def online_read_async(
        self,
        config: RepoConfig,
        table: FeatureView,
        entity_keys: List[EntityKeyProto],
        requested_features: Optional[List[str]] = None,
    ) -> List[Tuple[Optional[datetime], Optional[Dict[str, ValueProto]]]]:
        features, reads = self._plan(config, table, entity_keys, requested_features)
        return [to_row(v, features) for v in await self._hmget_async(config, reads)]

    def _work(self, config, grouped_refs, join_key_values, entity_name_to_join_key_map):
        items, reads = [], []
        for table, requested_features in grouped_refs:
            values, idxs, output_len = utils._get_unique_entities(table, join_key_values, entity_name_to_join_key_map)
            protos = utils._get_entity_key_protos(values)
            features, r = self._plan(config, table, protos, requested_features)
            items.append((table, requested_features, features, len(r), idxs, output_len))
            reads += r
        return items, reads

    @staticmethod
    def _populate(items, results, response, full_feature_names, include_version) -> None:
        offset = 0
        for table, requested, features, n, idxs, output_len in items:
            rows = [to_row(v, features) for v in results[offset : offset + n]]
            offset += n
            utils._populate_response_from_feature_data(
                features, rows, idxs, response, full_feature_names, table, output_len, include_version
            )

    def _read_features_per_fv(
        self,
        config: RepoConfig,
        grouped_refs,
        join_key_values,
        entity_name_to_join_key_map,
        online_features_response,
        full_feature_names: bool,
        include_feature_view_version_metadata: bool,
    ) -> None:
        # Every view's reads in one round trip.
        items, reads = self._work(config, grouped_refs, join_key_values, entity_name_to_join_key_map)
        if reads:
            results = self._hmget(config, reads)
            self._populate(items, results, online_features_response, full_feature_names, include_feature_view_version_metadata)

    async def _read_features_per_fv_async(
        self,
        config: RepoConfig,
        grouped_refs,
        join_key_values,
        entity_name_to_join_key_map,
        online_features_response,
        full_feature_names: bool,
        include_feature_view_version_metadata: bool,
    ) -> None:
        items, reads = self._work(config, grouped_refs, join_key_values, entity_name_to_join_key_map)
        if reads:
            results = await self._hmget_async(config, reads)
            self._populate(items, results, online_features_response, full_feature_names, include_feature_view_version_metadata)

    # -- update and teardown ------------------------------------------------

    def _own_keys(self, config: RepoConfig) -> List[bytes]:
        """Every row key of exactly this project (each parsed as a v3
        entity key followed by the project, nothing else)."""
        project = config.project.encode("utf-8")
        return [k for k in self._project_keys(config) if _layout.in_project(k, project)]

    def delete_table(self, config: RepoConfig, table: FeatureView) -> int:
        """Deletes a view's fields from the project's rows on its join keys;
        a row that held only this view goes whole. Returns the rows touched."""
        view = view_name(table, config)
        ts = _layout.ts_field(view).encode()
        join_keys = sorted(table.join_keys)
        keys = [k for k in self._own_keys(config) if sorted(_layout.split_row_key(k)[0]) == join_keys]
        if not keys:
            return 0
        fields = _layout.view_fields(view, [f.name for f in table.features]) + [ts]
        drop, trim = [], []
        for k, names in zip(keys, self._hkeys(config, keys)):
            views = {n for n in names if n.startswith(b"_ts:")}
            if ts not in views:
                continue
            if len(views) == 1:
                drop.append(k)
            else:
                trim.append((k, fields))
        self._delete(config, drop)
        self._hdel(config, trim)
        return len(drop) + len(trim)

    def update(
        self,
        config: RepoConfig,
        tables_to_delete: Sequence[FeatureView],
        tables_to_keep: Sequence[FeatureView],
        entities_to_delete: Sequence[Entity],
        entities_to_keep: Sequence[Entity],
        partial: bool,
    ) -> None:
        for table in tables_to_delete:
            self.delete_table(config, table)

    def teardown(self, config: RepoConfig, tables: Sequence[FeatureView], entities: Sequence[Entity]) -> None:
        self._delete(config, self._own_keys(config))


def chunks(seq: Sequence, n: int) -> Iterable[Sequence]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]
