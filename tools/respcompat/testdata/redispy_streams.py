"""redis-py's stream methods on our server and on redis-server: the same
results (idle times, which differ by the clock, are masked).

Usage: redispy_streams.py OURS_PORT REDIS_PORT PROTOCOL
Prints "redis-py streams ok N" at the end; a difference exits 1.
"""
import sys

import redis

ours_port, redis_port, proto = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])


def steps(r):
    """Each step returns a value, or the error's first word."""
    s = "{s}orders%d" % proto
    yield "xadd", lambda: r.xadd(s, {"sku": "1", "qty": "2"}, id="1-1")
    yield "xadd auto seq", lambda: r.xadd(s, {"sku": "2"}, id="1-*")
    yield "xadd maxlen", lambda: r.xadd(s, {"sku": "3"}, id="2-0", maxlen=10)
    yield "xadd small id", lambda: r.xadd(s, {"sku": "4"}, id="1-0")
    yield "xadd nomkstream", lambda: r.xadd("{s}none%d" % proto, {"f": "v"}, nomkstream=True)
    yield "xlen", lambda: r.xlen(s)
    yield "xrange", lambda: r.xrange(s)
    yield "xrange count", lambda: r.xrange(s, "-", "+", count=2)
    yield "xrevrange", lambda: r.xrevrange(s, "+", "(1-1")
    yield "xread", lambda: r.xread({s: "1-1"})
    yield "xread count", lambda: r.xread({s: "0"}, count=1)
    yield "xread nothing", lambda: r.xread({s: "$"})
    yield "xgroup create", lambda: r.xgroup_create(s, "billing", id="0")
    yield "xgroup busy", lambda: r.xgroup_create(s, "billing", id="0")
    yield "xgroup mkstream", lambda: r.xgroup_create("{s}new%d" % proto, "g", id="$", mkstream=True)
    yield "xreadgroup", lambda: r.xreadgroup("billing", "w1", {s: ">"}, count=2)
    yield "xreadgroup rest", lambda: r.xreadgroup("billing", "w2", {s: ">"})
    yield "xreadgroup history", lambda: r.xreadgroup("billing", "w1", {s: "0"})
    yield "xreadgroup noack", lambda: r.xreadgroup("billing", "w3", {s: ">"}, noack=True)
    yield "xpending", lambda: r.xpending(s, "billing")
    yield "xpending range", lambda: [(p["message_id"], p["consumer"], p["times_delivered"]) for p in r.xpending_range(s, "billing", "-", "+", 10)]
    yield "xpending consumer", lambda: [p["message_id"] for p in r.xpending_range(s, "billing", "-", "+", 10, consumername="w1")]
    yield "xack", lambda: r.xack(s, "billing", "1-1", "9-9")
    yield "xclaim", lambda: r.xclaim(s, "billing", "w3", 0, ["1-2"])
    yield "xclaim justid", lambda: r.xclaim(s, "billing", "w3", 0, ["2-0"], justid=True)
    yield "xautoclaim", lambda: r.xautoclaim(s, "billing", "w4", 0, start_id="0-0", count=1)
    yield "xautoclaim justid", lambda: r.xautoclaim(s, "billing", "w4", 0, start_id="0-0", justid=True)
    yield "xinfo groups", lambda: r.xinfo_groups(s)
    yield "xinfo stream", lambda: {k: v for k, v in r.xinfo_stream(s).items() if not k.startswith("radix")}
    yield "xgroup setid", lambda: r.xgroup_setid(s, "billing", "0")
    yield "xgroup createconsumer", lambda: r.xgroup_createconsumer(s, "billing", "w9")
    yield "xgroup delconsumer", lambda: r.xgroup_delconsumer(s, "billing", "w4")
    yield "xdel", lambda: r.xdel(s, "1-2", "7-7")
    yield "xtrim", lambda: r.xtrim(s, maxlen=1)
    yield "xtrim minid", lambda: r.xtrim(s, minid="3-0")
    yield "xlen after", lambda: r.xlen(s)
    yield "xgroup destroy", lambda: r.xgroup_destroy(s, "billing")
    yield "xreadgroup nogroup", lambda: r.xreadgroup("billing", "w1", {s: ">"})


def run(port):
    r = redis.Redis(host="127.0.0.1", port=port, protocol=proto, decode_responses=True)
    out = []
    for name, step in steps(r):
        try:
            out.append((name, step()))
        except redis.ResponseError as e:
            out.append((name, "error " + str(e).split(" ")[0]))
    return out


ours, theirs = run(ours_port), run(redis_port)
for (name, got), (_, want) in zip(ours, theirs):
    if got != want:
        print("%s: ours %r, redis-server %r" % (name, got, want))
        sys.exit(1)
print("redis-py streams ok %d" % len(ours))
