"""redis-py against our server and redis-server, command by command.

Usage: redispy_corpus.py CORPUS OURS_PORT REDIS_PORT PROTOCOL
Runs every line of CORPUS (one command, in redis-cli's quoting) through
redis-py's execute_command on both servers and requires the same result:
the same value after redis-py's own parsing, or an error with the same code.
Prints "redis-py corpus ok N" at the end; a difference exits 1.
"""
import shlex
import sys

import redis

corpus, ours_port, redis_port, proto = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# Raw bytes: the corpus holds values that are not UTF-8 (bitmaps).
ours = redis.Redis(port=ours_port, protocol=proto)
theirs = redis.Redis(port=redis_port, protocol=proto)
for r in (ours, theirs):
    r.flushall()


def run(r, args):
    try:
        return ("ok", r.execute_command(*args))
    except redis.ResponseError as e:
        # redis-py drops the generic "ERR " prefix; a code is an upper-case
        # first word (WRONGTYPE, NOPROTO, CROSSSLOT).
        first = str(e).split(" ", 1)[0]
        return ("error", first if first.isupper() and first.isalpha() else "ERR")
    except (ValueError, TypeError) as e:
        # redis-py's own parsing of a reply it did not expect for these
        # arguments (ZADD ... INCR without as_score): it must fail alike.
        return ("parse failure", type(e).__name__)


n = 0
with open(corpus, encoding="utf-8", errors="surrogateescape") as f:
    for lineno, line in enumerate(f, 1):
        args = [a.encode("utf-8", "surrogateescape") for a in shlex.split(line)]
        if not args:
            continue
        want, got = run(theirs, args), run(ours, args)
        if want != got:
            print("line %d: %s\n  redis-server: %r\n  ours:         %r" % (lineno, line.strip(), want, got))
            sys.exit(1)
        n += 1
print("redis-py corpus ok", n)
