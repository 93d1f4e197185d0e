"""redis-py's typed methods for scripting, HyperLogLog, databases and
introspection, on our server and on redis-server: the same results.

Usage: redispy_newverbs.py OURS_PORT REDIS_PORT PROTOCOL
Prints "redis-py new verbs ok N" at the end; a difference exits 1.
"""
import sys

import redis

ours_port, redis_port, proto = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

TOKEN_BUCKET = """
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or ARGV[1])
if tokens >= tonumber(ARGV[2]) then
  tokens = tokens - tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'tokens', tokens)
  redis.call('PEXPIRE', KEYS[1], 60000)
  return {1, tokens}
end
return {0, tokens}
"""
RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""
LIBRARY = """#!lua name=newverbs
redis.register_function('hello', function(keys, args) return 'hello ' .. args[1] end)
redis.register_function{function_name='getk', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}
"""


def steps(r, db3):
    """Each step returns a value, or the error's first word."""
    bucket = r.register_script(TOKEN_BUCKET)
    release = r.register_script(RELEASE)
    yield "eval", lambda: r.eval("return {1, 'two', 3.99, false, {ok='OK'}}", 0)
    yield "eval keys argv", lambda: r.eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", 1, "{t}k", "v")
    yield "eval error", lambda: r.eval("return redis.error_reply('MYERR boom')", 0)
    yield "eval pcall", lambda: r.eval("local e = redis.pcall('INCR', KEYS[1]); return type(e)", 1, "{t}text")
    yield "set text", lambda: r.set("{t}text", "abc")
    yield "eval call error", lambda: r.eval("return redis.call('INCR', KEYS[1])", 1, "{t}text")
    yield "script load", lambda: r.script_load("return 42")
    yield "script exists", lambda: r.script_exists("1fa00e76656cc152ad327c13fe365858fd7be306", "0" * 40)
    yield "evalsha", lambda: r.evalsha("1fa00e76656cc152ad327c13fe365858fd7be306", 0)
    yield "evalsha missing", lambda: r.evalsha("0" * 40, 0)
    for i in range(4):
        yield "token bucket %d" % i, lambda: bucket(keys=["{t}bucket"], args=[3, 1])
    yield "lock set", lambda: r.set("{t}lock", "me")
    yield "release other", lambda: release(keys=["{t}lock"], args=["you"])
    yield "release mine", lambda: release(keys=["{t}lock"], args=["me"])
    yield "eval_ro write", lambda: r.eval_ro("return redis.call('SET', KEYS[1], 'x')", 1, "{t}ro")
    yield "function load", lambda: r.function_load(LIBRARY)
    yield "fcall", lambda: r.fcall("hello", 0, "world")
    yield "fcall_ro", lambda: r.fcall_ro("getk", 1, "{t}text")
    yield "function delete", lambda: r.function_delete("newverbs")
    yield "script flush", lambda: r.script_flush()
    yield "pfadd", lambda: r.pfadd("{t}hll", *["e%d" % i for i in range(100)])
    yield "pfadd again", lambda: r.pfadd("{t}hll", "e1")
    yield "pfcount", lambda: r.pfcount("{t}hll")
    yield "pfadd other", lambda: r.pfadd("{t}hll2", *["e%d" % i for i in range(50, 300)])
    yield "pfmerge", lambda: r.pfmerge("{t}hll3", "{t}hll", "{t}hll2")
    yield "pfcount merged", lambda: r.pfcount("{t}hll3")
    yield "pfcount union", lambda: r.pfcount("{t}hll", "{t}hll2")
    yield "hll bytes", lambda: r.get("{t}hll")
    yield "pfadd text", lambda: r.pfadd("{t}text", "x")
    yield "object encoding", lambda: r.object("encoding", "{t}bucket")
    yield "object refcount", lambda: r.object("refcount", "{t}text")
    yield "config set", lambda: r.config_set("hash-max-listpack-entries", 0)
    # Redis converts an encoding on the next write, not when the setting changes.
    yield "hset after config", lambda: r.hset("{t}bucket", "x", "1")
    yield "object encoding after", lambda: r.object("encoding", "{t}bucket")
    yield "config get", lambda: r.config_get("hash-max-*-entries")
    yield "config set back", lambda: r.config_set("hash-max-listpack-entries", 128)
    yield "db3 set", lambda: db3.set("{t}in3", "v")
    yield "db0 get", lambda: r.get("{t}in3")
    yield "move", lambda: db3.move("{t}in3", 0)
    yield "db0 get moved", lambda: r.get("{t}in3")
    yield "swapdb", lambda: r.swapdb(0, 3)
    yield "db3 get swapped", lambda: db3.get("{t}in3")
    yield "db0 dbsize", lambda: r.dbsize()
    yield "swapdb back", lambda: r.swapdb(0, 3)
    yield "flushdb 3", lambda: db3.flushdb()
    yield "db0 dbsize after", lambda: r.dbsize()
    yield "select out of range", lambda: r.execute_command("SELECT", 16)


def run(fn):
    try:
        v = fn()
    except redis.ResponseError as e:
        return ("error", str(e).split(" ", 1)[0])
    if isinstance(v, dict):
        return ("ok", sorted(v.items()))
    return ("ok", v)


def client(port, db=0):
    return redis.Redis(port=port, protocol=proto, db=db, decode_responses=False)


ours, theirs = client(ours_port), client(redis_port)
for r in (ours, theirs):
    r.flushall()
    r.script_flush()
    r.function_flush()
n = 0
for (name, a), (_, b) in zip(steps(theirs, client(redis_port, 3)), steps(ours, client(ours_port, 3))):
    want, got = run(a), run(b)
    if want != got:
        print("%s:\n  redis-server: %r\n  ours:         %r" % (name, want, got))
        sys.exit(1)
    n += 1
print("redis-py new verbs ok", n)
