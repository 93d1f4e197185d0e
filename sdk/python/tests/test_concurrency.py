"""Four threads sharing one client: exact counts, no cross-talk."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from temporalstore import ControlClient, FeatureClient

THREADS = 4


def test_four_threads_share_one_client(server_url: str, key: str) -> None:
    fc = FeatureClient.from_url(server_url)
    cc = ControlClient.from_url(server_url)
    barrier = threading.Barrier(THREADS)
    per_thread = 60

    def work(t: int) -> list[int]:
        barrier.wait()
        allowed = []
        for i in range(per_thread):
            k = f"{key}-{t}-{i % 5}"
            v = bytes([t, i, 0xFF])
            assert fc.set(k, v)
            assert fc.get(k) == v  # each thread's own key: its own write
            cc.incr(key + "-hits", 1, at=1_000)
            r = cc.spend(key + "-budget", 1, 100, 60_000, at=1_000)
            allowed.append(int(r.allowed))
            fc.append(key + "-series", [(t * 1_000 + i, b"1")])
        return allowed

    try:
        with ThreadPoolExecutor(THREADS) as ex:
            results = list(ex.map(work, range(THREADS)))
        # One kept-alive connection per thread, per client.
        assert fc.transport.connections_opened == THREADS
        assert cc.transport.connections_opened == THREADS
        assert cc.count(key + "-hits", 10, at=1_000) == THREADS * per_thread
        assert sum(map(sum, results)) == 100, "the budget admitted more or less than it holds"
        assert cc.count(key + "-budget", 60_000, at=1_000) == 100
        assert fc.aggregate(key + "-series", 0, 10_000, "count") == THREADS * per_thread
        assert fc.aggregate(key + "-series", 0, 10_000, "sum") == THREADS * per_thread
    finally:
        fc.close()
        cc.close()
