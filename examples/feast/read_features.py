"""Reads the latest features of a few drivers through Feast (after
`feast apply` and `feast materialize-incremental`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from feast import FeatureStore


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repo", default=str(Path(__file__).resolve().parent / "feature_repo"))
    p.add_argument("drivers", nargs="*", type=int, default=[1001, 1002, 1003])
    a = p.parse_args()
    fs = FeatureStore(repo_path=a.repo)
    got = fs.get_online_features(
        features=[
            "driver_hourly_stats:conv_rate",
            "driver_hourly_stats:acc_rate",
            "driver_hourly_stats:avg_daily_trips",
        ],
        entity_rows=[{"driver_id": d} for d in a.drivers],
    ).to_dict()
    print(json.dumps(got, default=str))


if __name__ == "__main__":
    main()
