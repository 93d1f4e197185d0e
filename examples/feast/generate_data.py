"""Writes feature_repo/data/driver_stats.parquet: hourly rows for drivers
1001.., over the last two days, from a fixed seed (the same file each run
for the same end time)."""

from __future__ import annotations

import argparse
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd


def rows(drivers: int, hours: int, end: datetime, seed: int = 7) -> pd.DataFrame:
    rng = random.Random(seed)
    end = end.replace(minute=0, second=0, microsecond=0)
    out = []
    for h in range(hours):
        at = end - timedelta(hours=hours - 1 - h)
        for d in range(drivers):
            out.append({
                "driver_id": 1001 + d,
                "conv_rate": round(rng.random(), 4),
                "acc_rate": round(rng.random(), 4),
                "avg_daily_trips": rng.randrange(0, 1000),
                "event_timestamp": at,
                "created": at,
            })
    df = pd.DataFrame(out)
    df["conv_rate"] = df["conv_rate"].astype("float32")
    df["acc_rate"] = df["acc_rate"].astype("float32")
    return df


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--drivers", type=int, default=100, help="drivers (default 100)")
    p.add_argument("--hours", type=int, default=48, help="hourly rows per driver (default 48)")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "feature_repo" / "data" / "driver_stats.parquet"))
    a = p.parse_args()
    df = rows(a.drivers, a.hours, datetime.now(timezone.utc))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(a.out, index=False)
    print(f"wrote {len(df)} rows for {a.drivers} drivers to {a.out}")


if __name__ == "__main__":
    main()
