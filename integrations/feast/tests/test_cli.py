"""The examples/feast repo through Feast's CLI: apply, materialize,
materialize-incremental, a read and teardown, for both plugins, with the
port passed through ${...} in feature_store.yaml."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO
from feast_temporalstore import _layout

EXAMPLE = REPO / "examples" / "feast"


def feast(repo: Path, env: dict, *args: str) -> str:
    exe = Path(sys.executable).parent / "feast"
    p = subprocess.run([str(exe), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"feast {' '.join(args)}:\n{p.stdout}\n{p.stderr}"
    return p.stdout


@pytest.mark.parametrize("kind", ["command", "resp"])
def test_feature_repo_through_the_cli(server, tmp_path, project, kind):
    work = tmp_path / "example"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("data", "__pycache__"))
    repo = work / "feature_repo"
    yaml = (repo / "feature_store.yaml").read_text()
    yaml = yaml.replace("project: driver_demo", f"project: {project}")
    if kind == "command":
        yaml = yaml.replace("port: 17102", "port: ${TS_TEST_HTTP_PORT}")
    else:
        start = yaml.index("online_store:")
        end = yaml.index("offline_store:")
        yaml = yaml[:start] + ("online_store:\n  type: feast_temporalstore.TemporalStoreOnlineStore\n"
                               "  connection_string: 127.0.0.1:${TS_TEST_RESP_PORT}\n") + yaml[end:]
    (repo / "feature_store.yaml").write_text(yaml)
    env = dict(os.environ, TS_TEST_HTTP_PORT=str(server.http_port), TS_TEST_RESP_PORT=str(server.resp_port))

    end = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    subprocess.run([sys.executable, str(work / "generate_data.py"), "--drivers", "20", "--hours", "6"], check=True, env=env)
    df = pd.read_parquet(repo / "data" / "driver_stats.parquet")

    feast(repo, env, "apply")
    # Up to two hours ago (the end is inclusive), then the rest incrementally.
    cut = end - timedelta(hours=2)
    feast(repo, env, "materialize", (end - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S"), cut.strftime("%Y-%m-%dT%H:%M:%S"))
    out = subprocess.run([sys.executable, str(work / "read_features.py"), "--repo", str(repo), "1001", "1020", "999"],
                         capture_output=True, text=True, env=env, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    first = df[df.event_timestamp <= pd.Timestamp(cut)].sort_values("event_timestamp").groupby("driver_id").last()
    assert got["avg_daily_trips"] == [int(first.loc[1001].avg_daily_trips), int(first.loc[1020].avg_daily_trips), None]

    feast(repo, env, "materialize-incremental", (end + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S"))
    out = subprocess.run([sys.executable, str(work / "read_features.py"), "--repo", str(repo), "1001", "1020"],
                         capture_output=True, text=True, env=env, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    last = df.sort_values("event_timestamp").groupby("driver_id").last()
    assert got["avg_daily_trips"] == [int(last.loc[1001].avg_daily_trips), int(last.loc[1020].avg_daily_trips)]
    assert got["conv_rate"][0] == pytest.approx(float(last.loc[1001].conv_rate), rel=1e-6)

    r = server.redis()
    ours = [k for k in r.scan_iter(count=1000) if _layout.in_project(k, project.encode())]
    assert len(ours) == 20
    feast(repo, env, "teardown")
    assert [k for k in r.scan_iter(count=1000) if _layout.in_project(k, project.encode())] == []
