"""Control state: windowed counters for frequency caps, quotas, budgets,
pacing and first/last selections, each decision one round trip.

Counters keep per-key sums in time buckets (a bucket starts at ``at``, or
at ``at`` rounded down to ``precision_ms``). Windows are inclusive
``start..end`` in Unix ms; ``window_ms`` means the last ``window_ms``
milliseconds ending at ``at``: ``at - window_ms + 1 .. at``. ``at``
defaults to this machine's clock.

:meth:`ControlClient.take` (and :meth:`~ControlClient.cap`,
:meth:`~ControlClient.spend`) is the server's quota: the amount is
recorded only if the window's sum stays within the limit, atomically, so
a refused request leaves no trace. ``incr``, ``count``, ``take``, ``cap``
and ``spend`` share one state per key; ``add_and_count`` and
``family_count`` keep a separate state per family (``h`` counters,
``cpc`` distinct, ``fol`` selection), the one that supports request ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._codec import BytesLike, Name, check_int, from_wire_bytes, from_wire_name, wire_bytes, wire_name
from .client import Client, now_ms
from .errors import ProtocolError

__all__ = ["ControlClient", "QuotaResult", "PaceResult"]


@dataclass(frozen=True)
class QuotaResult:
    """A quota decision. ``allowed``: the amount was recorded. ``used``:
    the window's sum after the decision (the refused amount not in it).
    ``retry_after_ms``: when refused, how long until enough of the window
    ages out for the same amount to fit; 0 when refused means it never
    fits (the amount alone is above the limit). True when allowed."""

    allowed: bool
    used: int
    retry_after_ms: int

    def __bool__(self) -> bool:
        return self.allowed

    @property
    def retry_after(self) -> float:
        """``retry_after_ms`` in seconds."""
        return self.retry_after_ms / 1000.0


@dataclass(frozen=True)
class PaceResult:
    """A pacing decision: ``allowed``, and when refused the wait
    (``retry_after_ms``) until the event would keep to the rate. True when
    allowed."""

    allowed: bool
    retry_after_ms: int

    def __bool__(self) -> bool:
        return self.allowed

    @property
    def retry_after(self) -> float:
        return self.retry_after_ms / 1000.0


def _int(resp: dict[str, Any]) -> int:
    v = resp.get("value")
    if not isinstance(v, int):
        raise ProtocolError(f"expected an integer reply, got {resp!r:.200}")
    return v


def _entries(resp: dict[str, Any]) -> dict[bytes, bytes]:
    return {from_wire_name(f): from_wire_bytes(v) or b"" for f, v in resp.get("entries") or []}


def _at(at: int | None) -> int:
    return now_ms() if at is None else check_int(at, "at")


class ControlClient(Client):
    """Control state over the HTTP surface. Keys are ``str`` or
    ``bytes``; amounts, limits and budgets are integers (count money in
    its smallest unit)."""

    # Counters.

    def incr(
        self,
        key: Name,
        delta: int = 1,
        at: int | None = None,
        *,
        precision_ms: int | None = None,
        ttl_ms: int | None = None,
    ) -> None:
        """Adds ``delta`` to the bucket of ``at``. ``ttl_ms`` sets the
        whole key's expiry to now + ttl_ms (sliding with each write)."""
        self._run(
            "csincr",
            key=wire_name(key),
            delta=check_int(delta, "delta"),
            at=_at(at),
            precision_ms=precision_ms,
            ttl_ms=ttl_ms,
        )

    def count(self, key: Name, window_ms: int, at: int | None = None) -> int:
        """The sum of the last ``window_ms`` ending at ``at``."""
        end = _at(at)
        start = end - check_int(window_ms, "window_ms") + 1
        return _int(self._run("cscount", key=wire_name(key), start=start, end=end))

    def query(self, key: Name, start_ms: int, end_ms: int, aggregator: str = "sum") -> int:
        """Aggregates ``start_ms..end_ms``: ``sum``, ``events`` (buckets),
        ``min``/``max``/``first``/``last`` over the buckets' sums, or
        ``change`` (distinct values added with :meth:`add_distinct`)."""
        return _int(
            self._run("csquery", key=wire_name(key), start=start_ms, end=end_ms, aggregator=aggregator)
        )

    def detail(
        self, key: Name, start_ms: int, end_ms: int, *, limit: int | None = None
    ) -> list[tuple[int, int]]:
        """The (bucket start, sum) pairs of ``start_ms..end_ms``."""
        r = self._run("csdetail", key=wire_name(key), start=start_ms, end=end_ms, count=limit)
        return [(p["timestamp_ms"], int(bytes(p["value"]))) for p in r.get("points") or []]

    def add_distinct(
        self,
        key: Name,
        value: BytesLike,
        at: int | None = None,
        *,
        precision_ms: int | None = None,
        ttl_ms: int | None = None,
    ) -> None:
        """Adds ``value`` to the distinct values of ``at``'s bucket; read
        with ``query(..., aggregator="change")``."""
        self._run(
            "cschange", key=wire_name(key), value=wire_bytes(value), at=_at(at), precision_ms=precision_ms, ttl_ms=ttl_ms
        )

    # Family state: set-and-get with request ids.

    def add_and_count(
        self,
        key: Name,
        window_ms: int | None,
        delta: int = 1,
        at: int | None = None,
        *,
        request_id: str | None = None,
        family: str = "h",
        aggregator: str = "sum",
        precision_ms: int | None = None,
        ttl_ms: int | None = None,
    ) -> int:
        """Adds ``delta`` at ``at`` to ``family``'s state of ``key`` and
        returns the window's aggregate with it, in one round trip. With
        ``request_id``, a repeat of the same id within the server's dedup
        window (5 minutes) adds nothing and returns the current aggregate,
        so a retried request counts once. ``window_ms=None`` only adds
        (and returns 0)."""
        t = _at(at)
        start = end = None
        if window_ms is not None:
            end = t
            start = t - check_int(window_ms, "window_ms") + 1
        r = self._run(
            "cssetandget",
            key=wire_name(key),
            family=family,
            delta=check_int(delta, "delta"),
            at=t,
            start=start,
            end=end,
            aggregator=aggregator,
            request_id=request_id or None,
            precision_ms=precision_ms,
            ttl_ms=ttl_ms,
        )
        return _int(r)

    def family_query(
        self, key: Name, start_ms: int, end_ms: int, *, family: str = "h", aggregator: str = "sum"
    ) -> int:
        """:meth:`query` on ``family``'s state of ``key``."""
        return _int(
            self._run(
                "csfamilyquery", key=wire_name(key), family=family, start=start_ms, end=end_ms, aggregator=aggregator
            )
        )

    def family_count(self, key: Name, window_ms: int, at: int | None = None, *, family: str = "h") -> int:
        """The sum of ``family``'s state of ``key`` over the last
        ``window_ms``."""
        end = _at(at)
        return self.family_query(key, end - check_int(window_ms, "window_ms") + 1, end, family=family)

    # Quotas, caps and budgets: record only what fits.

    def take(
        self,
        key: Name,
        amount: int,
        limit: int,
        window_ms: int,
        at: int | None = None,
        *,
        precision_ms: int | None = None,
        ttl_ms: int | None = None,
        request_id: str | None = None,
    ) -> QuotaResult:
        """Records ``amount`` at ``at`` only if the last ``window_ms``'s sum
        stays within ``limit``; all or nothing, atomically. With
        ``request_id``, a retry of a take the server applied within its
        dedup window is answered allowed and adds nothing."""
        r = self._run(
            "cstake",
            key=wire_name(key),
            delta=check_int(amount, "amount"),
            limit=check_int(limit, "limit"),
            window_ms=check_int(window_ms, "window_ms"),
            at=_at(at),
            precision_ms=precision_ms,
            ttl_ms=ttl_ms,
            request_id=request_id or None,
        )
        if r.get("kind") != "quota":
            raise ProtocolError(f"expected a quota reply, got {r!r:.200}")
        return QuotaResult(bool(r.get("applied")), int(r.get("value") or 0), int(r.get("retry_after_ms") or 0))

    def cap(
        self,
        key: Name,
        limit: int,
        window_ms: int,
        at: int | None = None,
        *,
        precision_ms: int | None = None,
        ttl_ms: int | None = None,
        request_id: str | None = None,
    ) -> QuotaResult:
        """A frequency cap: checks and records one event in one round
        trip, allowed while fewer than ``limit`` were recorded in the last
        ``window_ms``; a refused event is not recorded."""
        return self.take(key, 1, limit, window_ms, at, precision_ms=precision_ms, ttl_ms=ttl_ms, request_id=request_id)

    def spend(
        self,
        key: Name,
        amount: int,
        budget: int,
        window_ms: int,
        at: int | None = None,
        *,
        precision_ms: int | None = None,
        ttl_ms: int | None = None,
        request_id: str | None = None,
    ) -> QuotaResult:
        """A budget gate: records the spend only when the window's spend
        with it stays within ``budget``; a rejected spend is never
        recorded, so it does not eat into the budget. A retried spend with
        the same ``request_id`` counts once."""
        return self.take(key, amount, budget, window_ms, at, precision_ms=precision_ms, ttl_ms=ttl_ms, request_id=request_id)

    def pace(
        self,
        key: Name,
        limit: int,
        window_ms: int,
        *,
        cost: int = 1,
        burst: int | None = None,
        ttl_ms: int | None = None,
    ) -> PaceResult:
        """Paces events to ``limit`` per ``window_ms``, evenly spaced (the
        generic cell rate algorithm), with bursts of up to ``burst`` events
        (default 1). An event of ``cost`` is allowed when it keeps to the
        rate; the server's clock decides. A cost above the burst is never
        allowed."""
        r = self._run(
            "cspace",
            key=wire_name(key),
            limit=check_int(limit, "limit"),
            window_ms=check_int(window_ms, "window_ms"),
            delta=check_int(cost, "cost"),
            count=burst,
            ttl_ms=ttl_ms,
        )
        if r.get("kind") != "quota":
            raise ProtocolError(f"expected a quota reply, got {r!r:.200}")
        return PaceResult(bool(r.get("applied")), int(r.get("retry_after_ms") or 0))

    # Selections.

    def select(
        self, key: Name, value: BytesLike, at: int | None = None, *, last: bool = False, ttl_ms: int | None = None
    ) -> None:
        """Offers ``value`` occurring at ``at`` (default: the server's
        now) as the key's selection: the earliest occurrence is kept, or
        with ``last`` the latest."""
        self._run(
            "csselect",
            key=wire_name(key),
            value=wire_bytes(value),
            at=None if at is None else check_int(at, "at"),
            select_last=True if last else None,
            ttl_ms=ttl_ms,
        )

    def selection(self, key: Name) -> bytes | None:
        """The key's selected value, None when there is none."""
        return from_wire_bytes(self._run("csselection", key=wire_name(key)).get("value"))

    # Views.

    def manager(
        self,
        key: Name,
        *,
        op: int | None = None,
        family: str | None = None,
        start_ms: int = 0,
        end_ms: int = 0,
        timestamps: list[int] | None = None,
    ) -> dict[bytes, bytes]:
        """The key's state as field/value pairs, by ``op``: 2 the sums at
        ``timestamps``, 5 the bucket list, 6 the bucket count, 7 every
        bucket; none: a summary of the h and cpc families and the
        selection. ``family`` is h (default) or cpc; ``start_ms`` and
        ``end_ms`` both 0 mean every bucket."""
        args = [wire_bytes(str(check_int(t, "timestamp")).encode()) for t in timestamps] if timestamps else None
        r = self._run(
            "csmanager",
            key=wire_name(key),
            count=op,
            family=family,
            start=start_ms or None,
            end=end_ms or None,
            args=args,
        )
        return _entries(r)

    def debug(self, key: Name, start_ms: int = 0, end_ms: int = 0) -> dict[bytes, bytes]:
        """The key's raw state over ``start_ms..end_ms`` (both 0: all):
        ``b"<ts>"`` → bucket sum, ``b"change:<ts>"`` → distinct values,
        and the selection's fields."""
        return _entries(self._run("csdebug", key=wire_name(key), start=start_ms or None, end=end_ms or None))
