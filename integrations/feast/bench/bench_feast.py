"""Feature serving through Feast 0.67, with only ``online_store`` differing
between arms: SQLite (in-process), Feast's Redis store on redis-server, and
TemporalStore's command plugin on an async and on a durable table (its RESP
plugin in extra rows); two ceilings: a null store (a dict in the client's
process: Feast's own work) and, with --bench-bin, the command plugin on a
bare-map server (the HTTP surface over a Go map: the engine's cost taken out).

5,000 entities, a hot set of 512, 1,500 timed calls per cell, one client
thread; 20 B rows (ten int64) and 1,035 B rows (four int64 and 1 KiB of
bytes); batches of 1 and 10; cold p50 (entities never read), warm p50, rows/s
(rows over summed call time); the load's write rows/s. Every arm's rows are
read back and compared, bytes and event times, before timing. Every arm is
live at once and they take turns: loads by view and pass, timed calls in
blocks of 100 after one untimed call, the order rotating each turn, so a slow patch of a shared
machine falls on every arm alike. Each repeat starts fresh servers. Prints a
table, writes JSON, and ends with

``feast: p50_20b_b1_vs_redis_ratio=… p50_20b_b10_vs_redis_ratio=… p50_1k_b1_vs_redis_ratio=… p50_1k_b10_vs_redis_ratio=… materialize_vs_redis_ratio=…``

(ratios > 1: ours faster; the command plugin on the durable table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pandas as pd

ENTITIES, HOT, CALLS, WARM_EXTRA = 5000, 512, 1500, 500
BLOCK = 100  # timed calls an arm makes before the next arm's turn
T0 = datetime(2026, 11, 30, tzinfo=timezone.utc)
PASSES = 3  # load passes, each at a newer event time
PAYLOADS = {"20b": "small", "1k": "large"}


def log(*a: Any) -> None:
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 30, resp: bool = True) -> None:
    """Waits for a server to answer: a RESP GET, or a TCP connection where
    it serves HTTP alone."""
    import redis

    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if resp:
                redis.Redis(port=port, socket_timeout=1).get("__ready__")
            else:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except Exception:  # noqa: BLE001 - until the deadline
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def pinned(cmd: List[str], cpu: Optional[int]) -> List[str]:
    return (["taskset", "-c", str(cpu)] + cmd) if cpu is not None and shutil.which("taskset") else cmd


@dataclass
class Proc:
    """A server process of one arm, on a fresh data directory."""

    kind: str  # ours-async, ours-durable, redis, bare
    binary: str
    cpu: Optional[int]
    resp_port: int = 0
    http_port: int = 0
    proc: Optional[subprocess.Popen] = None
    dir: str = ""

    def start(self) -> None:
        self.dir = tempfile.mkdtemp(prefix=f"feastbench-{self.kind}-")
        self.resp_port = free_port()
        if self.kind == "redis":
            cmd = [self.binary, "--port", str(self.resp_port), "--save", "", "--appendonly", "no", "--dir", self.dir]
        elif self.kind == "bare":
            self.http_port = self.resp_port
            cmd = [self.binary, "feastbare", "--addr", f"127.0.0.1:{self.http_port}"]
        else:
            self.http_port = free_port()
            cmd = [self.binary, "--data", self.dir + "/data", "--resp", f"127.0.0.1:{self.resp_port}",
                   "--http", f"127.0.0.1:{self.http_port}", "--s3", "", "--log-level", "warn"]
            if self.kind == "ours-async":
                cmd.append("--async")
        self.proc = subprocess.Popen(pinned(cmd, self.cpu), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.resp_port, self.proc, resp=self.kind != "bare")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class Arm:
    name: str
    server: Optional[str]  # the Proc kind it needs, None for SQLite
    online_store: Callable[[Optional[Proc], Path], Any]
    label: str = ""


def _null_store_classes():
    """An online store that keeps rows in a dict of this process: no I/O,
    no encoding beyond Feast's own objects. Its latency is Feast's own
    work, the least any online store can add to: the benchmark's ceiling."""
    from typing import Literal

    from feast.infra.online_stores.online_store import OnlineStore
    from feast.repo_config import FeastConfigBaseModel

    class NullOnlineStoreConfig(FeastConfigBaseModel):
        type: Literal["bench_feast.NullOnlineStore"] = "bench_feast.NullOnlineStore"

    class NullOnlineStore(OnlineStore):
        rows: Dict[tuple, tuple] = {}

        def online_write_batch(self, config, table, data, progress):
            for ek, values, ts, _ in data:
                if ts.tzinfo is None:  # Feast hands naive UTC; reads return aware
                    ts = ts.replace(tzinfo=timezone.utc)
                k = (table.name, ek.SerializeToString())
                old = self.rows.get(k)
                if old is None or ts > old[0]:
                    self.rows[k] = (ts, values)

        def online_read(self, config, table, entity_keys, requested_features=None):
            out = []
            for ek in entity_keys:
                got = self.rows.get((table.name, ek.SerializeToString()))
                out.append((None, None) if got is None else got)
            return out

        def update(self, config, tables_to_delete, tables_to_keep, entities_to_delete, entities_to_keep, partial):
            pass

        def teardown(self, config, tables, entities):
            self.rows.clear()

    return NullOnlineStoreConfig, NullOnlineStore


def arms(include_resp: bool, bare: bool) -> List[Arm]:
    from feast.infra.online_stores.redis import RedisOnlineStoreConfig
    from feast.infra.online_stores.sqlite import SqliteOnlineStoreConfig

    from feast_temporalstore import TemporalStoreOnlineStoreConfig
    from feast_temporalstore_command import TemporalStoreCommandOnlineStoreConfig

    out = [
        Arm("null", None, lambda p, d: NullOnlineStoreConfig(), "a dict in the client's process (the ceiling)"),
        Arm("sqlite", None, lambda p, d: SqliteOnlineStoreConfig(path=str(d / "online.db")), "SQLite, in-process (rollback journal)"),
        Arm("redis", "redis", lambda p, d: RedisOnlineStoreConfig(connection_string=f"127.0.0.1:{p.resp_port}"),
            "Redis 7 via Feast's Redis store (no persistence)"),
        Arm("ours_async", "ours-async", lambda p, d: TemporalStoreCommandOnlineStoreConfig(port=p.http_port),
            "ours, command plugin, async table"),
        Arm("ours_durable", "ours-durable", lambda p, d: TemporalStoreCommandOnlineStoreConfig(port=p.http_port),
            "ours, command plugin, durable table"),
    ]
    if bare:
        out.append(Arm("bare", "bare", lambda p, d: TemporalStoreCommandOnlineStoreConfig(port=p.http_port),
                       "the command plugin on a bare-map server (the HTTP surface, rows in a Go map: the engine's ceiling)"))
    if include_resp:
        out.append(Arm("ours_resp_durable", "ours-durable", lambda p, d: TemporalStoreOnlineStoreConfig(connection_string=f"127.0.0.1:{p.resp_port}"),
                       "ours, RESP plugin, durable table"))
    return out


def definitions(d: Path):
    from feast import Entity, FeatureView, Field, FileSource, ValueType
    from feast.types import Bytes, Int64

    item = Entity(name="item", join_keys=["item_id"], value_type=ValueType.INT64)
    src = FileSource(name="src", path=str(d / "unused.parquet"), timestamp_field="event_timestamp")
    small = FeatureView(name="small", entities=[item], source=src, online=True,
                        schema=[Field(name=f"f{i}", dtype=Int64) for i in range(10)])
    large = FeatureView(name="large", entities=[item], source=src, online=True,
                        schema=[Field(name=f"f{i}", dtype=Int64) for i in range(4)] + [Field(name="blob", dtype=Bytes)])
    return item, small, large


def frames(seed: int = 11) -> Dict[str, List[pd.DataFrame]]:
    """Each view's load passes, the same in every arm."""
    rng = random.Random(seed)
    out: Dict[str, List[pd.DataFrame]] = {"small": [], "large": []}
    ids = list(range(ENTITIES))
    for p in range(PASSES):
        at = [T0 + timedelta(seconds=p, microseconds=i) for i in ids]
        small = {"item_id": ids, "event_timestamp": at}
        for i in range(10):
            small[f"f{i}"] = [rng.randrange(128) for _ in ids]
        large = {"item_id": ids, "event_timestamp": at}
        for i in range(4):
            large[f"f{i}"] = [rng.randrange(128) for _ in ids]
        large["blob"] = [rng.randbytes(1024) for _ in ids]
        out["small"].append(pd.DataFrame(small))
        out["large"].append(pd.DataFrame(large))
    return out


def key_streams(seed: int = 23) -> Dict[str, List[List[int]]]:
    rng = random.Random(seed)
    cold = rng.sample(range(HOT, ENTITIES), CALLS)
    return {
        "cold_b1": [[k] for k in cold],
        "warm_b1": [[rng.randrange(HOT)] for _ in range(CALLS)],
        "warm_b10": [rng.sample(range(HOT), 10) for _ in range(CALLS)],
        "warmup": [[rng.randrange(HOT)] for _ in range(WARM_EXTRA)],
    }


@dataclass
class Live:
    """One arm during a repeat: its server, its Feast repo, its results."""

    arm: Arm
    proc: Optional[Proc]
    fs: Any
    dir: Path
    res: Dict[str, Any] = field(default_factory=dict)
    rows: int = 0
    spent: float = 0.0


def setup(arm: Arm, proc: Optional[Proc], work: Path) -> Live:
    from feast import FeatureStore, RepoConfig

    d = Path(tempfile.mkdtemp(prefix=f"feastbench-{arm.name}-", dir=work))
    cfg = RepoConfig(project="bench", provider="local", registry=str(d / "registry.db"),
                     online_store=arm.online_store(proc, d), entity_key_serialization_version=3, repo_path=str(d))
    fs = FeatureStore(config=cfg, repo_path=str(d))
    item, small, large = definitions(d)
    fs.apply([item, small, large])
    return Live(arm, proc, fs, d, {"arm": arm.name})


def turns(lives: List[Live], k: int) -> List[Live]:
    """The arms in turn k's order: rotated by one each turn."""
    k %= len(lives)
    return lives[k:] + lives[:k]


def run_repeat(lives: List[Live], data, keys) -> None:
    """Loads, verifies and times every arm, the arms taking turns."""
    # Load: every pass of both views, 5,000-row chunks, arm after arm.
    turn = 0
    for p in range(PASSES):
        for view in ("small", "large"):
            df = data[view][p]
            for lv in turns(lives, turn):
                t = time.perf_counter()
                lv.fs.write_to_online_store(view, df)
                lv.spent += time.perf_counter() - t
                lv.rows += len(df)
            turn += 1
    for lv in lives:
        lv.res["write_rows_per_s"] = lv.rows / lv.spent
        # Feast's SQLite store keeps whole seconds of event time.
        verify(lv.fs, data, whole_seconds=lv.arm.name == "sqlite")

    for payload, view in PAYLOADS.items():
        feats = [f"{view}:{f.name}" for f in lives[0].fs.get_feature_view(view).features]
        # One pass over the hot set and more calls, untimed.
        for lv in lives:
            for k in range(HOT):
                lv.fs.get_online_features(features=feats, entity_rows=[{"item_id": k}])
            for ks in keys["warmup"]:
                lv.fs.get_online_features(features=feats, entity_rows=[{"item_id": k} for k in ks]).to_dict()
        for cell in ("cold_b1", "warm_b1", "warm_b10"):
            lat: Dict[str, List[float]] = {lv.arm.name: [] for lv in lives}
            conv: Dict[str, List[float]] = {lv.arm.name: [] for lv in lives}
            stream = keys[cell]
            for b in range(0, len(stream), BLOCK):
                for lv in turns(lives, turn):
                    get = lv.fs.get_online_features
                    # A turn's first call, untimed, on a hot entity: the
                    # switch from another arm's process is not its latency.
                    get(features=feats, entity_rows=[{"item_id": 0}])
                    for ks in stream[b : b + BLOCK]:
                        t = time.perf_counter()
                        r = get(features=feats, entity_rows=[{"item_id": k} for k in ks])
                        t1 = time.perf_counter()
                        r.to_dict()
                        conv[lv.arm.name].append(time.perf_counter() - t1)
                        lat[lv.arm.name].append(t1 - t)
                turn += 1
            n = sum(len(ks) for ks in stream)
            for lv in lives:
                ls = lat[lv.arm.name]
                lv.res[f"{payload}_{cell}"] = {
                    "p50_us": statistics.median(ls) * 1e6,
                    "p99_us": sorted(ls)[int(len(ls) * 0.99)] * 1e6,
                    "rows_per_s": n / sum(ls),
                    "to_dict_p50_us": statistics.median(conv[lv.arm.name]) * 1e6,
                }


def verify(fs, data, whole_seconds: bool = False) -> None:
    """Every row of the last pass, read back through the online store,
    byte for byte, with its event time (to the second where the store keeps
    only seconds)."""
    from feast.protos.feast.types.EntityKey_pb2 import EntityKey
    from feast.protos.feast.types.Value_pb2 import Value

    store = fs._get_provider().online_store
    for view in ("small", "large"):
        fv = fs.get_feature_view(view)
        df = data[view][-1]
        names = [f.name for f in fv.features]
        keys = [EntityKey(join_keys=["item_id"], entity_values=[Value(int64_val=int(i))]) for i in df.item_id]
        got = store.online_read(fs.config, fv, keys, list(names))  # Feast's Redis store appends to it
        for (ts, feats), (_, want) in zip(got, df.iterrows()):
            at = want.event_timestamp.to_pydatetime()
            if whole_seconds:
                at = at.replace(microsecond=0)
            if feats is None or ts != at:
                raise SystemExit(f"verify: {view} item {want.item_id}: event time {ts} != {want.event_timestamp}")
            for n in names:
                w = Value(bytes_val=want[n]) if n == "blob" else Value(int64_val=int(want[n]))
                if feats[n].SerializeToString() != w.SerializeToString():
                    raise SystemExit(f"verify: {view} item {want.item_id} feature {n} differs")


def ratio_spread(ours: List[float], peer: List[float], lower_better: bool) -> Dict[str, float]:
    rs = [(p / o if lower_better else o / p) for o, p in zip(ours, peer)]
    return {"median": statistics.median(rs), "min": min(rs), "max": max(rs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-bin", required=True, help="TemporalStore's server binary (examples/server)")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server", help="redis-server binary")
    ap.add_argument("--bench-bin", help="tools/bench binary, whose `feastbare` server is the bare-map arm; left out without it")
    ap.add_argument("--repeats", type=int, default=3, help="repeats, the arms' order rotated each time (default 3)")
    ap.add_argument("--out", default="bench-results/feast.json", help="JSON report path")
    ap.add_argument("--no-resp", action="store_true", help="leave out the RESP plugin's extra arm")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the client to CPU 0 and servers to CPU 1")
    a = ap.parse_args()

    pin = not a.no_pin and (os.cpu_count() or 1) >= 2
    if pin:
        os.sched_setaffinity(0, {0})
    all_arms = arms(not a.no_resp, bool(a.bench_bin))
    log(f"preparing rows: {ENTITIES} entities x {PASSES} passes x 2 views")
    data, keys = frames(), key_streams()
    work = Path(tempfile.mkdtemp(prefix="feastbench-"))
    runs: Dict[str, List[Dict[str, Any]]] = {arm.name: [] for arm in all_arms}
    try:
        for r in range(a.repeats):
            log(f"repeat {r + 1}/{a.repeats}: starting servers and repos of {len(all_arms)} arms")
            lives: List[Live] = []
            try:
                for arm in turns(all_arms, r):
                    proc = None
                    if arm.server:
                        binary = {"redis": a.redis_server, "bare": a.bench_bin}.get(arm.server, a.server_bin)
                        proc = Proc(arm.server, binary, 1 if pin else None)
                        proc.start()
                    lives.append(setup(arm, proc, work))
                run_repeat(lives, data, keys)
                for lv in lives:
                    lv.fs.teardown()
            finally:
                for lv in lives:
                    if lv.proc:
                        lv.proc.stop()
                    shutil.rmtree(lv.dir, ignore_errors=True)
            for lv in lives:
                res = lv.res
                log(f"  {lv.arm.name}: warm p50 µs: 20b b1 {res['20b_warm_b1']['p50_us']:.0f} b10 {res['20b_warm_b10']['p50_us']:.0f}; "
                    f"1k b1 {res['1k_warm_b1']['p50_us']:.0f} b10 {res['1k_warm_b10']['p50_us']:.0f}; write {res['write_rows_per_s']:.0f} rows/s")
                runs[lv.arm.name].append(res)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report(a, all_arms, runs, pin)


def report(a, all_arms, runs, pin) -> int:
    cells = [f"{p}_{c}" for p in PAYLOADS for c in ("cold_b1", "warm_b1", "warm_b10")]
    summary: Dict[str, Any] = {}
    for arm in all_arms:
        rs = runs[arm.name]
        s = {"write_rows_per_s": statistics.median(x["write_rows_per_s"] for x in rs)}
        for c in cells:
            s[c] = {k: statistics.median(x[c][k] for x in rs) for k in rs[0][c]}
        summary[arm.name] = s
    ratios: Dict[str, Dict[str, Any]] = {}
    for arm in all_arms:
        if not arm.name.startswith("ours"):
            continue
        ours, peer = runs[arm.name], runs["redis"]
        rr = {c: ratio_spread([x[c]["p50_us"] for x in ours], [x[c]["p50_us"] for x in peer], True) for c in cells}
        rr["write"] = ratio_spread([x["write_rows_per_s"] for x in ours], [x["write_rows_per_s"] for x in peer], False)
        ratios[arm.name] = rr
    # The ceiling: the null store (a dict in the client's process) does no
    # I/O and no encoding: Feast's own work is all its latency.
    ceiling = {c: ratio_spread([x[c]["p50_us"] for x in runs["null"]], [x[c]["p50_us"] for x in runs["redis"]], True) for c in cells}

    print(f"feast 0.67 online reads, medians of {len(runs['redis'])} repeats, arms taking turns in blocks of {BLOCK} calls; p50/p99 µs of get_online_features; "
          f"ratio = redis p50 / ours p50 per repeat, median (min..max); client pinned to CPU 0, servers to CPU 1: {pin}")
    head = f"{'cell':<14}" + "".join(f"{arm.name:>22}" for arm in all_arms)
    print(head)
    for c in cells:
        print(f"{c:<14}" + "".join(f"{summary[arm.name][c]['p50_us']:>12.0f}/{summary[arm.name][c]['p99_us']:<9.0f}" for arm in all_arms))
    print(f"{'write rows/s':<14}" + "".join(f"{summary[arm.name]['write_rows_per_s']:>22.0f}" for arm in all_arms))
    for name, rr in ratios.items():
        print(f"{name} vs redis: " + " ".join(f"{c}={rr[c]['median']:.2f}({rr[c]['min']:.2f}..{rr[c]['max']:.2f})" for c in cells + ["write"]))
    print("ceiling (null store in the client's process vs redis): " + " ".join(f"{c}={ceiling[c]['median']:.2f}" for c in cells))
    bare = None
    if "bare" in runs:
        # The engine's ceiling: the same plugin and HTTP surface over a Go
        # map. What ours could reach were its storage free.
        bare = {c: ratio_spread([x[c]["p50_us"] for x in runs["bare"]], [x[c]["p50_us"] for x in runs["redis"]], True) for c in cells}
        print("ceiling (command plugin on the bare-map server vs redis): " + " ".join(
            f"{c}={bare[c]['median']:.2f}({bare[c]['min']:.2f}..{bare[c]['max']:.2f})" for c in cells))
    print("warm rows/s b10: " + " ".join(f"{arm.name}={summary[arm.name]['20b_warm_b10']['rows_per_s']:.0f}" for arm in all_arms))

    rep = {
        "name": "feast", "started": datetime.now(timezone.utc).isoformat(),
        "conditions": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
                       "pinned": pin, "entities": ENTITIES, "hot": HOT, "calls": CALLS, "block": BLOCK},
        "runs": runs, "summary": summary, "ratios": ratios, "ceiling_null_vs_redis": ceiling, "ceiling_bare_vs_redis": bare,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(rep, indent=1, default=str))
    main_arm = ratios["ours_durable"]
    line = {
        "p50_20b_b1_vs_redis_ratio": main_arm["20b_warm_b1"]["median"],
        "p50_20b_b10_vs_redis_ratio": main_arm["20b_warm_b10"]["median"],
        "p50_1k_b1_vs_redis_ratio": main_arm["1k_warm_b1"]["median"],
        "p50_1k_b10_vs_redis_ratio": main_arm["1k_warm_b10"]["median"],
        "materialize_vs_redis_ratio": main_arm["write"]["median"],
        "async_p50_20b_b1_vs_redis_ratio": ratios["ours_async"]["20b_warm_b1"]["median"],
        "async_materialize_vs_redis_ratio": ratios["ours_async"]["write"]["median"],
        "ceiling_p50_20b_b10_vs_redis_ratio": ceiling["20b_warm_b10"]["median"],
        "ceiling_p50_1k_b10_vs_redis_ratio": ceiling["1k_warm_b10"]["median"],
    }
    if bare is not None:
        for p in PAYLOADS:
            for b in ("b1", "b10"):
                line[f"bare_p50_{p}_{b}_vs_redis_ratio"] = bare[f"{p}_warm_{b}"]["median"]
    print("feast: " + " ".join(f"{k}={v:.2f}" for k, v in line.items()))
    return 0


# Feast finds a store by module and class name: this module's, whether it
# runs as a script or is imported.
NullOnlineStoreConfig, NullOnlineStore = _null_store_classes()

if __name__ == "__main__":
    sys.modules.setdefault("bench_feast", sys.modules["__main__"])
    sys.exit(main())
