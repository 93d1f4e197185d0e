"""Memory (mem0's API) against a live server: every method and route,
mem0 2.2.1's signatures, v1-style keywords, errors, tenants by token."""

from __future__ import annotations

import hashlib
import inspect
import uuid
from collections.abc import Iterator

import pytest

from temporalstore.llm_context import Memory

from conftest import Server, start_server


@pytest.fixture
def mem(server_url: str) -> Memory:
    return Memory(base_url=server_url)


@pytest.fixture
def uid() -> str:
    """A user no other test uses."""
    return "u-" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def tenant_server(server_bin, workdir) -> Iterator[Server]:
    srv = start_server(server_bin, workdir, "--context-token", "key-a=acme:admin,key-b=globex")
    yield srv
    srv.stop()


def test_signatures_are_mem0s():
    params = lambda f: list(inspect.signature(f).parameters)  # noqa: E731
    assert params(Memory.__init__) == ["self", "base_url", "api_key", "timeout"]
    assert params(Memory.add) == ["self", "messages", "user_id", "agent_id", "run_id", "metadata", "timestamp",
                                  "expiration_date", "infer", "memory_type", "prompt"]
    assert params(Memory.get) == ["self", "memory_id"]
    assert params(Memory.get_all) == ["self", "filters", "top_k", "show_expired", "legacy"]
    assert params(Memory.search) == ["self", "query", "top_k", "filters", "threshold", "rerank", "explain",
                                     "reference_date", "show_expired", "legacy"]
    assert params(Memory.update) == ["self", "memory_id", "text", "metadata", "expiration_date", "data"]
    assert params(Memory.delete) == ["self", "memory_id"]
    assert params(Memory.delete_all) == ["self", "user_id", "agent_id", "run_id"]
    assert params(Memory.history) == ["self", "memory_id"]
    assert params(Memory.reset) == ["self"]
    assert inspect.signature(Memory.search).parameters["threshold"].default is None
    assert inspect.signature(Memory.__init__).parameters["timeout"].default == 30.0


def test_env(monkeypatch, server_url):
    monkeypatch.setenv("TEMPORALSTORE_BASE_URL", server_url + "/")
    monkeypatch.setenv("MATRIXARK_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("MATRIXARK_API_KEY", "k")
    m = Memory()
    assert m.base_url == server_url
    assert m.api_key == "k"
    monkeypatch.delenv("TEMPORALSTORE_BASE_URL")
    assert Memory().base_url == "http://127.0.0.1:1"
    monkeypatch.delenv("MATRIXARK_BASE_URL")
    assert Memory().base_url == "http://127.0.0.1:17102"


def test_add_get_update_history_delete(mem, uid):
    res = mem.add("I adopted a parrot called Kiwi", user_id=uid, metadata={"topic": "pets", "user_id": "x"})
    [r] = res["results"]
    assert r["event"] == "ADD" and r["memory"] == "I adopted a parrot called Kiwi"
    mid = r["id"]
    assert uuid.UUID(mid).version == 4

    item = mem.get(mid)
    assert item["memory"] == "I adopted a parrot called Kiwi"
    assert item["hash"] == hashlib.md5(b"I adopted a parrot called Kiwi").hexdigest()
    assert item["user_id"] == uid
    assert item["metadata"] == {"topic": "pets"}, "id keys leave metadata"
    assert item["created_at"].endswith("+00:00")

    assert mem.update(mid, text="My parrot is called Mango")["message"] == "Memory updated successfully!"
    assert mem.get(mid)["memory"] == "My parrot is called Mango"
    assert mem.update(mid, data="My parrot Mango is green")  # mem0's older keyword
    rows = mem.history(mid)
    assert [h["event"] for h in rows] == ["ADD", "UPDATE", "UPDATE"]
    assert rows[1]["old_memory"] == "I adopted a parrot called Kiwi"
    assert rows[1]["new_memory"] == "My parrot is called Mango"

    assert mem.delete(mid)["message"] == "Memory deleted successfully"
    assert mem.get(mid) is None
    assert [h["event"] for h in mem.history(mid)] == ["ADD", "UPDATE", "UPDATE", "DELETE"]
    with pytest.raises(ValueError, match="404"):
        mem.delete(mid)


def test_search_and_get_all_v1_and_v2(mem, uid):
    mem.add([{"role": "user", "content": "I am flying to Tokyo in May"},
             {"role": "system", "content": "you are a helpful assistant"},
             {"role": "user", "content": "I prefer window seats"}], user_id=uid)
    other = "u-" + uuid.uuid4().hex[:12]
    mem.add("I am flying to Tokyo too", user_id=other)

    v1 = mem.search("Tokyo flight", user_id=uid, limit=8)  # the seed's v1 call
    v2 = mem.search("Tokyo flight", filters={"user_id": uid}, top_k=8)
    assert [x["id"] for x in v1["results"]] == [x["id"] for x in v2["results"]]
    texts = [x["memory"] for x in v1["results"]]
    assert texts[0] == "I am flying to Tokyo in May"
    assert "I am flying to Tokyo too" not in texts, "another user's memory"
    assert all(0 <= x["score"] <= 1 for x in v1["results"])
    assert mem.search("Tokyo flight", user_id=uid, threshold=0.99)["results"] == []

    all_ = mem.get_all(user_id=uid)["results"]
    assert sorted(x["memory"] for x in all_) == ["I am flying to Tokyo in May", "I prefer window seats"], "system skipped"
    assert len(mem.get_all(filters={"user_id": uid}, top_k=1)["results"]) == 1

    # infer=True drops a text the scope already holds; infer=False keeps it.
    assert mem.add("I prefer window seats", user_id=uid)["results"] == []
    assert len(mem.add("I prefer window seats", user_id=uid, infer=False)["results"]) == 1

    assert "deleted" in mem.delete_all(user_id=uid)["message"]
    assert mem.get_all(user_id=uid)["results"] == []
    assert mem.get_all(user_id=other)["results"], "delete_all stays in its scope"


def test_errors(mem, uid):
    with pytest.raises(ValueError, match="At least one identifier"):
        mem.add("no scope")
    with pytest.raises(ValueError, match="At least one filter"):
        mem.delete_all()
    with pytest.raises(ValueError, match="400"):
        mem.add("bad id", user_id="has space")
    with pytest.raises(ValueError, match="400"):
        mem.get_all()
    assert mem.get(str(uuid.uuid4())) is None
    with pytest.raises(TypeError):
        mem.search("q", user_id=uid, color="red")
    with pytest.raises(RuntimeError):
        Memory(base_url="http://127.0.0.1:1", timeout=2).get(str(uuid.uuid4()))


def test_batches_and_pack(mem, uid):
    ids = [r["id"] for r in mem.add([{"role": "user", "content": "the budget is 40 euros"},
                                     {"role": "user", "content": "the deadline moved to Friday"}], user_id=uid)["results"]]
    out = mem.batch_update([{"memory_id": ids[0], "text": "the budget is 55 euros"},
                            {"memory_id": str(uuid.uuid4()), "text": "x"}])
    assert out["updated"] == 1 and len(out["failed"]) == 1
    assert mem.get(ids[0])["memory"] == "the budget is 55 euros"

    packed = mem.pack("what is the budget", "What is the budget?", max_prompt_tokens=300, user_id=uid)
    assert packed["injected_prompt"].startswith("What is the budget?\n\n<context>\n")
    assert "55 euros" in packed["injected_prompt"]
    assert "40 euros" not in packed["injected_prompt"], "the updated text left the context"
    audit = packed["audit"]
    assert audit["prompt_tokens"] + audit["selected_tokens"] <= 300
    assert len(audit["selected_refs"]) == len(packed["selected_blocks"])

    out = mem.batch_delete(ids)
    assert out["deleted"] == 2 and out["failed"] == []
    with pytest.raises(ValueError):
        mem.batch_delete(["x"] * 1001)


def test_tenants_by_token(tenant_server):
    a = Memory(base_url=tenant_server.url, api_key="key-a")
    b = Memory(base_url=tenant_server.url, api_key="key-b")
    [r] = a.add("acme's secret plan", user_id="alice")["results"]
    assert b.get(r["id"]) is None
    assert b.search("secret plan", user_id="alice")["results"] == []
    with pytest.raises(ValueError, match="404"):
        b.delete(r["id"])
    with pytest.raises(ValueError, match="403"):
        b.reset()
    with pytest.raises(ValueError, match="401"):
        Memory(base_url=tenant_server.url, api_key="wrong").get_all(user_id="alice")
    with pytest.raises(ValueError, match="401"):
        Memory(base_url=tenant_server.url, api_key="").get_all(user_id="alice")
    a.reset()
    assert a.get(r["id"]) is None
