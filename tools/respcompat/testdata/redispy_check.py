"""redis-py against a TemporalStore RESP server: happy paths and errors.

Usage: redispy_check.py HOST PORT PROTOCOL [PASSWORD]
Prints one line per check and "redis-py ok" at the end; any failure raises.
"""
import sys

import redis

host, port, proto = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
password = sys.argv[4] if len(sys.argv) > 4 else None
r = redis.Redis(host=host, port=port, protocol=proto, password=password, decode_responses=True)


def check(name, cond):
    if not cond:
        raise AssertionError(name)
    print("ok", name)


def error(name, fn, code):
    # redis-py drops the generic "ERR " prefix from the message it raises.
    want = code[4:] if code.startswith("ERR ") else code
    try:
        fn()
    except redis.ResponseError as e:
        check(name + " -> " + str(e), want in str(e))
        return
    raise AssertionError(name + ": no error")


p = "p%d:" % proto
check("ping", r.ping() is True)
check("set", r.set(p + "s", "hello") is True)
check("get", r.get(p + "s") == "hello")
check("set nx on existing", r.set(p + "s", "x", nx=True) is None)
check("set ex", r.set(p + "t", "v", ex=100) is True and 0 < r.ttl(p + "t") <= 100)
check("incr", r.incr(p + "n") == 1 and r.incrby(p + "n", 41) == 42)
check("incrbyfloat", float(r.incrbyfloat(p + "f", 2.5)) == 2.5)
check("mset/mget", r.mset({p + "a": "1", p + "b": "2"}) and r.mget(p + "a", p + "b", p + "zz") == ["1", "2", None])
check("append/strlen", r.append(p + "s", " world") == 11 and r.strlen(p + "s") == 11)
check("getrange", r.getrange(p + "s", 0, 4) == "hello")
error("incr on text", lambda: r.incr(p + "s"), "ERR value is not an integer")
check("hset/hgetall", r.hset(p + "h", mapping={"f1": "v1", "f2": "v2"}) == 2 and r.hgetall(p + "h") == {"f1": "v1", "f2": "v2"})
check("hincrby", r.hincrby(p + "h", "n", 5) == 5)
check("hdel/hlen", r.hdel(p + "h", "f1") == 1 and r.hlen(p + "h") == 2)
error("wrongtype", lambda: r.lpush(p + "h", "x"), "WRONGTYPE")
check("sadd/smembers", r.sadd(p + "set", "a", "b", "c") == 3 and r.smembers(p + "set") == {"a", "b", "c"})
check("sismember", r.sismember(p + "set", "a") in (1, True))
check("sinter", r.sinter(p + "set", p + "none") == set())
check("zadd/zrange", r.zadd(p + "z", {"a": 1, "b": 2.5, "c": 3}) == 3)
# redis-py gives tuples in RESP2 and lists in RESP3, as it does against Redis.
check("zrange withscores", [tuple(x) for x in r.zrange(p + "z", 0, -1, withscores=True)] == [("a", 1.0), ("b", 2.5), ("c", 3.0)])
check("zrangebyscore", r.zrangebyscore(p + "z", "(1", "+inf") == ["b", "c"])
check("zscore", r.zscore(p + "z", "b") == 2.5)
check("zrank", r.zrank(p + "z", "c") == 2)
check("zincrby", r.zincrby(p + "z", 1, "a") == 2.0)
popped = r.zpopmin(p + "z")
check("zpopmin", popped == [("a", 2.0)] if proto == 2 else popped == ["a", 2.0])
check("rpush/lrange", r.rpush(p + "l", "1", "2", "3") == 3 and r.lrange(p + "l", 0, -1) == ["1", "2", "3"])
check("lpop count", r.lpop(p + "l", 2) == ["1", "2"])
check("lmove", r.lmove(p + "l", p + "l", "RIGHT", "LEFT") == "3")
error("lset out of range", lambda: r.lset(p + "l", 10, "x"), "ERR index out of range")
check("expire/persist", r.expire(p + "s", 100) and r.persist(p + "s") and r.ttl(p + "s") == -1)
check("type", r.type(p + "z") == "zset" and r.type(p + "nothing") == "none")
check("delete/exists", r.delete(p + "a", p + "b") == 2 and r.exists(p + "a") == 0)
keys = set(r.scan_iter(match=p + "*", count=5))
check("scan", {p + "s", p + "h", p + "set", p + "z", p + "l"} <= keys)

pipe = r.pipeline(transaction=False)
for i in range(200):
    pipe.set(p + "pipe%d" % i, i)
pipe.get(p + "pipe199")
check("pipeline", pipe.execute()[-1] == "199")

tx = r.pipeline(transaction=True)
tx.incr(p + "{acct}a").incr(p + "{acct}b").get(p + "{acct}a")
check("multi/exec", tx.execute() == [1, 1, "1"])
try:
    bad = r.pipeline(transaction=True)
    for i in range(10):
        bad.set(p + "spread%d" % i, "v")
    bad.execute()
    raise AssertionError("cross-shard transaction ran")
except redis.ResponseError as e:
    check("cross-shard multi -> " + str(e), "same shard" in str(e))

error("unknown command", lambda: r.execute_command("NOSUCHVERB", "INFO"), "ERR unknown command")
error("cluster off", lambda: r.execute_command("CLUSTER", "INFO"), "This instance has cluster support disabled")
error("wrong arity", lambda: r.execute_command("GET"), "ERR wrong number of arguments")
check("info", r.info("keyspace")["db0"]["keys"] > 0)

# The time-aware verbs, which Redis does not have, through execute_command.
x = r.execute_command
f = p + "series"
check("fappend", x("FAPPEND", f, 10, "1") in ("OK", True) and x("FAPPEND", f, 20, "2") in ("OK", True))
check("fappendpolicy", x("FAPPENDPOLICY", f, 10, "9", "NX") == 0)
check("fquery", x("FQUERY", f, 0, 100) == [[10, "1"], [20, "2"]])
check("fagg", x("FAGG", f, 0, 100, "sum") == 3)
check("faggs", x("FAGGS", f, 0, 100, "max", "count") == [2, 2])
check("freplace", x("FREPLACE", f, 0, 15, 12, "7") in ("OK", True) and x("FQUERY", f, 0, 100) == [[12, "7"], [20, "2"]])
error("fagg unknown aggregator", lambda: x("FAGG", f, 0, 100, "median"), "ERR unknown aggregator")
error("fappend bad timestamp", lambda: x("FAPPEND", f, -1, "1"), "ERR timestamp_ms must be an unsigned integer")
check("fdel", x("FDEL", f) in ("OK", True) and r.exists(f) == 0)
c = p + "ctl"
check("controlstateincr", x("CONTROLSTATEINCR", c, 1000, 2) in ("OK", True))
check("controlstatecount", x("CONTROLSTATECOUNT", c, 0, 2000) == 2)
check("hsetandgetopt", x("HSETANDGETOPT", c + "u", 20, 3, 0, 100, "sum", 0, 0, "req-1") == 3)
check("hsetandgetopt retried", x("HSETANDGETOPT", c + "u", 20, 3, 0, 100, "sum", 0, 0, "req-1") == 3)
check("quotatake", x("QUOTATAKE", c + "q", 3, 60000, 2) == [1, 2, 0])
check("pace", x("PACE", c + "p", 1, 60000)[0] == 1)
check("folset", x("FOLSET", c + "s", "early", 10, 0, "FIRST") in ("OK", True) and x("FOLQUERY", c + "s") == "early")
error("controlstateincr bad amount", lambda: x("CONTROLSTATEINCR", c, 1000, "x"), "ERR amount must be an integer")
error("control on a string", lambda: x("CONTROLSTATEINCR", p + "s", 1, 1), "WRONGTYPE")
print("redis-py ok")
