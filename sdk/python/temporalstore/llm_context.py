"""A mem0-compatible memory client for the server's ``/memories`` API.

``Memory`` has mem0 2.2.1's method signatures, so code written for mem0
runs against TemporalStore by changing the import::

    from temporalstore.llm_context import Memory

    m = Memory()  # $TEMPORALSTORE_BASE_URL or http://127.0.0.1:17102
    m.add("I moved to Lisbon in March", user_id="alice")
    m.search("where does alice live", user_id="alice", limit=8)

Deviations from mem0: the v1-style ``user_id``/``agent_id``/``run_id``/
``limit`` keyword arguments are merged into ``filters`` (mem0 2.x raises);
``threshold`` defaults to None (mem0: 0.1). Extensions: ``batch_update``,
``batch_delete`` (at most 1,000, not atomic) and ``pack`` (the server's
context pack to a token budget). A 4xx reply raises ValueError with the
server's ``detail``; any other failure raises RuntimeError. Stdlib only.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["Memory"]

DEFAULT_BASE_URL = "http://127.0.0.1:17102"
MAX_BATCH = 1000
_IDS = ("user_id", "agent_id", "run_id")


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


def _env(*names: str) -> str | None:
    for n in names:
        v = os.environ.get(n)
        if v:
            return v
    return None


class Memory:
    """Memories of users, agents and runs, kept by a TemporalStore server."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = (base_url or _env("TEMPORALSTORE_BASE_URL", "MATRIXARK_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else _env("TEMPORALSTORE_API_KEY", "MATRIXARK_API_KEY")
        self.timeout = timeout

    # -- transport ---------------------------------------------------------

    def _request(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None) -> Any:
        url = self.base_url + path
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            detail = _detail(e.read()) or e.reason
            if 400 <= e.code < 500:
                raise ValueError(f"{e.code}: {detail}") from None
            raise RuntimeError(f"{e.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as e:
            raise RuntimeError(f"{method} {path}: {e}") from e
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise RuntimeError(f"{method} {path}: unreadable reply {raw[:200]!r}") from e

    # -- mem0's methods ----------------------------------------------------

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: int | float | None = None,
        expiration_date: str | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Stores messages (a string is one user message) as memories;
        returns ``{"results": [{id, memory, event, ...}]}``."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        elif isinstance(messages, dict):
            messages = [messages]
        body: dict[str, Any] = {"messages": messages, "infer": infer}
        for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id), ("metadata", metadata),
                     ("expiration_date", expiration_date), ("memory_type", memory_type), ("prompt", prompt),
                     ("timestamp", timestamp)):
            if v is not None:
                body[k] = v
        return self._request("POST", "/memories", body)

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory, or None when there is none."""
        return self._request("GET", "/memories/" + urllib.parse.quote(memory_id, safe=""))

    def get_all(self, *, filters: dict[str, Any] | None = None, top_k: int = 20, show_expired: bool = False,
                **legacy: Any) -> dict[str, Any]:
        """Every memory of the ids in ``filters`` (or the legacy keywords)."""
        f, limit = _merge(filters, legacy)
        query = {k: f.get(k) for k in _IDS}
        query["top_k"] = limit or top_k
        if show_expired:
            query["show_expired"] = "true"
        return self._request("GET", "/memories", query=query)

    def search(self, query: str, *, top_k: int = 20, filters: dict[str, Any] | None = None,
               threshold: float | None = None, rerank: bool = False, explain: bool = False,
               reference_date: str | None = None, show_expired: bool = False, **legacy: Any) -> dict[str, Any]:
        """Memories relevant to ``query``, best first, each with a score."""
        f, limit = _merge(filters, legacy)
        body: dict[str, Any] = {"query": query, "top_k": limit or top_k}
        if f:
            body["filters"] = f
        if threshold is not None:
            body["threshold"] = threshold
        if show_expired:
            body["show_expired"] = True
        return self._request("POST", "/search", body)

    def update(self, memory_id: str, text: str | None = None, metadata: dict[str, Any] | None = None,
               expiration_date: Any = _UNSET, data: str | None = None) -> dict[str, Any]:
        """Replaces the memory's text (``data`` is mem0's older name for it)
        and/or metadata."""
        body: dict[str, Any] = {}
        if text is not None or data is not None:
            body["text"] = text if text is not None else data
        if metadata is not None:
            body["metadata"] = metadata
        if expiration_date is not _UNSET:
            body["expiration_date"] = expiration_date
        return self._request("PUT", "/memories/" + urllib.parse.quote(memory_id, safe=""), body)

    def delete(self, memory_id: str) -> dict[str, Any]:
        return self._request("DELETE", "/memories/" + urllib.parse.quote(memory_id, safe=""))

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict[str, Any]:
        """Deletes every memory of the ids given; at least one is required."""
        if not (user_id or agent_id or run_id):
            raise ValueError("At least one filter is required to delete all memories. If you want to delete all memories, use the `reset()` method.")
        return self._request("DELETE", "/memories", query={"user_id": user_id, "agent_id": agent_id, "run_id": run_id})

    def history(self, memory_id: str) -> list:
        """The memory's changes, oldest first."""
        return self._request("GET", "/memories/" + urllib.parse.quote(memory_id, safe="") + "/history") or []

    def reset(self) -> None:
        """Deletes every memory of the tenant (an admin key)."""
        self._request("POST", "/reset")

    # -- extensions --------------------------------------------------------

    def batch_update(self, memories: list[dict[str, Any]]) -> dict[str, Any]:
        """Updates each ``{memory_id, text?, metadata?}``; not atomic."""
        if len(memories) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH} memories per batch")
        results, failed = [], []
        for m in memories:
            mid = m.get("memory_id") or m.get("id")
            try:
                self.update(mid, text=m.get("text"), metadata=m.get("metadata"))
                results.append({"id": mid, "status": "updated"})
            except (ValueError, RuntimeError) as e:
                failed.append({"id": mid, "error": str(e)})
        return {"results": results, "updated": len(results), "failed": failed}

    def batch_delete(self, memory_ids: list[str]) -> dict[str, Any]:
        """Deletes each memory; not atomic."""
        if len(memory_ids) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH} memories per batch")
        results, failed = [], []
        for mid in memory_ids:
            try:
                self.delete(mid)
                results.append({"id": mid, "status": "deleted"})
            except (ValueError, RuntimeError) as e:
                failed.append({"id": mid, "error": str(e)})
        return {"results": results, "deleted": len(results), "failed": failed}

    def pack(self, query: str, prompt: str, max_prompt_tokens: int = 2048, **scope: Any) -> dict[str, Any]:
        """Retrieves context for ``query`` in a scope (user_id, run_id,
        agent_id, session_id) and packs it after ``prompt`` within the token
        budget; the reply carries the injected prompt and the pack's audit."""
        retrieve: dict[str, Any] = {"query": query}
        for k, v in scope.items():
            if k == "run_id":
                k = "session_id"
            if v is not None:
                retrieve[k] = v
        body = {"retrieve": retrieve, "prompt": prompt, "max_prompt_tokens": max_prompt_tokens}
        if retrieve.get("session_id"):
            body["session_id"] = retrieve["session_id"]
        return self._request("POST", "/context/pack", body)


def _merge(filters: dict[str, Any] | None, legacy: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """filters with the v1-style keywords merged in; and a legacy limit."""
    f = dict(filters or {})
    limit = legacy.pop("limit", None)
    for k in _IDS:
        v = legacy.pop(k, None)
        if v is not None:
            f[k] = v
    if legacy:
        raise TypeError(f"unexpected keyword arguments: {', '.join(sorted(legacy))}")
    return f, limit


def _detail(raw: bytes) -> str:
    try:
        v = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:500]
    if isinstance(v, dict):
        return str(v.get("detail") or v.get("message") or v)
    return str(v)
