package resp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// hllCompare runs each command on our server and on redis-server and
// requires the same reply or the same error text, and after each the same
// bytes (GET) and TYPE under every key of keys.
func hllCompare(t *testing.T, ours, theirs *redis.Client, keys []string, cmds [][]any) {
	t.Helper()
	ctx := t.Context()
	for i, args := range cmds {
		where := fmt.Sprintf("step %d: %.100v", i, args)
		want, werr := theirs.Do(ctx, args...).Result()
		got, gerr := ours.Do(ctx, args...).Result()
		if werr != nil {
			require.Error(t, gerr, "%s: redis says %v, we replied %v", where, werr, got)
			require.Equal(t, werr.Error(), gerr.Error(), where)
		} else {
			require.NoError(t, gerr, "%s: redis replied %v", where, want)
			require.Equal(t, want, got, where)
		}
		for _, k := range keys {
			wv, werr := theirs.Get(ctx, k).Result()
			gv, gerr := ours.Get(ctx, k).Result()
			if werr != nil {
				require.Equal(t, werr.Error(), fmt.Sprint(gerr), "%s: GET %s", where, k)
				continue
			}
			require.NoError(t, gerr, "%s: GET %s", where, k)
			require.Equal(t, []byte(wv), []byte(gv), "%s: GET %s", where, k)
		}
	}
}

func hllAdd(key, prefix string, lo, hi int) []any {
	args := []any{"PFADD", key}
	for i := lo; i < hi; i++ {
		args = append(args, fmt.Sprint(prefix, i))
	}
	return args
}

// PFADD, PFCOUNT and PFMERGE give redis-server's replies and leave every
// key's bytes as redis-server leaves them: sparse and dense values, the
// promotion between them one element at a time, merges of both
// encodings, empty PFADDs, missing keys, wrong types and corrupted values
// built with SET, cardinalities from 1 to 200,000, and random sequences.
func TestHyperLogLogMatchesRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ours := client(t, addr, 2)
	theirs := testredis.Start(t)
	header := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
	keys := []string{"{h}a", "{h}b", "{h}c", "{h}d", "{h}s", "{h}bad", "{h}l"}
	fixed := [][]any{
		{"PFADD", "{h}a"}, {"PFADD", "{h}a"}, {"PFCOUNT", "{h}a"}, {"PFCOUNT", "{h}none"}, {"PFCOUNT", "{h}none", "{h}a"},
		{"PFADD", "{h}a", "x"}, {"PFCOUNT", "{h}a"}, {"PFCOUNT", "{h}a"}, {"PFMERGE", "{h}b"}, {"PFMERGE", "{h}c", "{h}none"},
		{"SET", "{h}s", "a plain string"}, {"PFADD", "{h}s", "x"}, {"PFCOUNT", "{h}s"}, {"PFCOUNT", "{h}a", "{h}s"}, {"PFMERGE", "{h}a", "{h}s"},
		{"SET", "{h}s", ""}, {"PFADD", "{h}s"}, {"SET", "{h}s", 12345}, {"PFCOUNT", "{h}s"},
		{"LPUSH", "{h}l", "x"}, {"PFADD", "{h}l", "x"}, {"PFCOUNT", "{h}l"}, {"PFMERGE", "{h}l", "{h}a"}, {"PFMERGE", "{h}a", "{h}l"},
		{"SET", "{h}bad", header + "\x7f\xfe"}, {"PFCOUNT", "{h}bad"}, {"PFCOUNT", "{h}a", "{h}bad"}, {"PFMERGE", "{h}d", "{h}bad"}, {"PFADD", "{h}bad"},
		{"SET", "{h}bad", header + "\x7f\xff\x80"}, {"PFCOUNT", "{h}bad"}, {"PFMERGE", "{h}a", "{h}bad", "{h}l"},
		{"SET", "{h}bad", header[:4] + "\x02" + header[5:]}, {"PFADD", "{h}bad", "x"},
		{"SET", "{h}bad", header[:4] + "\x00" + header[5:]}, {"PFCOUNT", "{h}bad"},
		{"SET", "{h}bad", header + "\x40\x00\x7f\xfe"}, {"PFADD", "{h}bad", "1", "2", "3"}, {"PFCOUNT", "{h}bad"},
		{"DEL", "{h}bad", "{h}s", "{h}l"},
	}
	for i := range 2500 {
		fixed = append(fixed, hllAdd("{h}b", "one", i, i+1))
	}
	fixed = append(fixed, []any{"PFCOUNT", "{h}b"}, hllAdd("{h}c", "c", 0, 300), []any{"PFMERGE", "{h}d", "{h}c", "{h}a"},
		[]any{"PFMERGE", "{h}d", "{h}b"}, []any{"PFMERGE", "{h}c", "{h}a"}, []any{"PFCOUNT", "{h}a", "{h}b", "{h}c", "{h}d"},
		[]any{"SETRANGE", "{h}b", 20, "\x00"}, []any{"PFCOUNT", "{h}b"}, []any{"APPEND", "{h}c", "x"}, []any{"PFCOUNT", "{h}c"},
		[]any{"PFADD", "{h}c", "y"}, []any{"EXPIRE", "{h}a", 1000}, []any{"PFMERGE", "{h}a", "{h}d"}, []any{"TTL", "{h}a"})
	require.NoError(t, theirs.FlushAll(t.Context()).Err())
	hllCompare(t, ours, theirs, keys, fixed)

	// PFDEBUG and PFSELFTEST.
	debug := [][]any{
		{"PFADD", "{h}x", "a", "b", "c"}, {"PFDEBUG", "ENCODING", "{h}x"}, {"PFDEBUG", "DECODE", "{h}x"}, {"PFDEBUG", "GETREG", "{h}x"},
		{"PFDEBUG", "encoding", "{h}x"}, {"PFDEBUG", "DECODE", "{h}x"}, {"PFDEBUG", "TODENSE", "{h}x"}, {"PFADD", "{h}y", "q"},
		{"PFDEBUG", "TODENSE", "{h}y"}, {"PFDEBUG", "ENCODING", "{h}none"}, {"PFDEBUG", "NOSUCH", "{h}none"}, {"PFDEBUG", "NoSuch", "{h}x"},
		{"SET", "{h}bad", header + "\x7f\xfe"}, {"PFDEBUG", "DECODE", "{h}bad"}, {"PFDEBUG", "GETREG", "{h}bad"}, {"PFDEBUG", "TODENSE", "{h}bad"},
		{"SET", "{h}s", "str"}, {"PFDEBUG", "ENCODING", "{h}s"}, {"LPUSH", "{h}l", "x"}, {"PFDEBUG", "ENCODING", "{h}l"}, {"PFSELFTEST"},
	}
	hllCompare(t, ours, theirs, []string{"{h}x", "{h}y", "{h}bad", "{h}s", "{h}l"}, debug)

	// Cardinalities from 1 to 200,000.
	var counts [][]any
	at := 0
	for _, n := range []int{1, 2, 3, 10, 100, 1000, 10000, 50000, 100000, 200000} {
		for ; at < n; at = min(n, at+5000) {
			counts = append(counts, hllAdd("{h}n", "n", at, min(n, at+5000)))
		}
		counts = append(counts, []any{"PFCOUNT", "{h}n"}, []any{"PFCOUNT", "{h}n", "{h}a"})
	}
	hllCompare(t, ours, theirs, []string{"{h}n"}, counts)

	// Random sequences over a few keys.
	rng := rand.New(rand.NewPCG(7, 8))
	rkeys := []string{"{r}a", "{r}b", "{r}c"}
	var random [][]any
	for range 300 {
		k := rkeys[rng.IntN(len(rkeys))]
		pick := func() []any {
			ks := []any{k}
			for range rng.IntN(3) {
				ks = append(ks, rkeys[rng.IntN(len(rkeys))])
			}
			return ks
		}
		switch r := rng.IntN(10); {
		case r < 6:
			lo := rng.IntN(30000)
			random = append(random, hllAdd(k, "r", lo, lo+rng.IntN([]int{2, 20, 200, 3000}[rng.IntN(4)])))
		case r < 8:
			random = append(random, append([]any{"PFCOUNT"}, pick()...))
		default:
			random = append(random, append([]any{"PFMERGE"}, pick()...))
		}
	}
	hllCompare(t, ours, theirs, rkeys, random)
}

// The HyperLogLog commands run inside MULTI/EXEC as outside it.
func TestHyperLogLogInTransaction(t *testing.T) {
	addr, _ := start(t, Options{})
	ours := client(t, addr, 2)
	theirs := testredis.Start(t)
	ctx := t.Context()
	for _, c := range []*redis.Client{ours, theirs} {
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.PFAdd(ctx, "{t}a", "x", "y", "z")
			p.PFCount(ctx, "{t}a")
			p.PFAdd(ctx, "{t}b", "w")
			p.PFMerge(ctx, "{t}m", "{t}a", "{t}b")
			p.PFCount(ctx, "{t}m", "{t}a")
			p.PFCount(ctx, "{t}m")
			return nil
		})
		require.NoError(t, err)
	}
	for _, k := range []string{"{t}a", "{t}b", "{t}m"} {
		require.Equal(t, theirs.Get(ctx, k).Val(), ours.Get(ctx, k).Val(), k)
	}
}
