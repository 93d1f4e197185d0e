package hll

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// model runs PFADD, PFCOUNT, PFMERGE, SET and GET on string values with
// this package, replying as Redis does.
type model map[string][]byte

func redisErr(err error) error {
	switch {
	case errors.Is(err, ErrNotHLL):
		return errors.New("WRONGTYPE Key is not a valid HyperLogLog string value.")
	case errors.Is(err, ErrCorrupt):
		return errors.New("INVALIDOBJ Corrupted HLL object detected")
	}
	return err
}

func (m model) do(args []string) (any, error) {
	bs := func(ss []string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	switch strings.ToLower(args[0]) {
	case "set":
		m[args[1]] = []byte(args[2])
		return "OK", nil
	case "get":
		v, ok := m[args[1]]
		if !ok {
			return nil, redis.Nil
		}
		return string(v), nil
	case "pfadd":
		v, ok := m[args[1]]
		out, changed, err := PFAdd(v, ok, bs(args[2:]))
		if err != nil {
			return nil, redisErr(err)
		}
		if out != nil {
			m[args[1]] = out
		}
		if changed {
			return int64(1), nil
		}
		return int64(0), nil
	case "pfcount":
		if len(args) == 2 {
			v, ok := m[args[1]]
			card, out, err := PFCount(v, ok)
			if err != nil {
				return nil, redisErr(err)
			}
			if out != nil {
				m[args[1]] = out
			}
			return int64(card), nil
		}
		regs, _, err := Union(m.values(args[1:]))
		if err != nil {
			return nil, redisErr(err)
		}
		return int64(regs.Count()), nil
	case "pfmerge":
		regs, dense, err := Union(m.values(args[1:]))
		if err != nil {
			return nil, redisErr(err)
		}
		v, ok := m[args[1]]
		out, err := PFMerge(v, ok, regs, dense)
		if err != nil {
			return nil, redisErr(err)
		}
		m[args[1]] = out
		return "OK", nil
	}
	return nil, fmt.Errorf("model: unknown command %q", args[0])
}

func (m model) values(keys []string) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// compare runs each command on Redis and on the model and requires the
// same reply, and after each the same bytes under every key.
func compare(t *testing.T, rdb *redis.Client, m model, cmds [][]string) {
	t.Helper()
	ctx := context.Background()
	for i, c := range cmds {
		args := make([]any, len(c))
		for j, a := range c {
			args[j] = a
		}
		want, wantErr := rdb.Do(ctx, args...).Result()
		got, gotErr := m.do(c)
		msg := fmt.Sprintf("step %d: %.80q", i, c)
		if wantErr != nil {
			require.Error(t, gotErr, msg)
			require.Equal(t, wantErr.Error(), gotErr.Error(), msg)
		} else {
			require.NoError(t, gotErr, msg)
			require.Equal(t, want, got, msg)
		}
		for k, v := range m {
			raw, err := rdb.Get(ctx, k).Bytes()
			require.NoError(t, err, msg)
			require.Equal(t, raw, v, "%s: key %q", msg, k)
		}
	}
}

func elems(prefix string, lo, hi int) []string {
	out := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func cmd(name string, args ...string) []string { return append([]string{name}, args...) }

// Sequences of commands give the same replies and bytes as Redis's.
func TestCommandsAgainstRedis(t *testing.T) {
	dense := New()
	require.NoError(t, dense.ToDense())
	denseBytes := string(dense.Bytes())
	odd := string(New().Bytes()[:HeaderSize]) // a sparse header, opcodes added below
	cases := []struct {
		name string
		cmds [][]string
	}{
		{"empty pfadd", [][]string{cmd("pfadd", "a"), cmd("pfadd", "a"), cmd("pfcount", "a"), cmd("pfcount", "a")}},
		{"one element", [][]string{cmd("pfadd", "a", "x"), cmd("pfadd", "a", "x"), cmd("pfcount", "a"), cmd("pfadd", "a", "x"), cmd("pfadd", "a", "y"), cmd("pfcount", "a")}},
		{"missing keys", [][]string{cmd("pfcount", "a"), cmd("pfcount", "a", "b"), cmd("pfmerge", "d"), cmd("pfmerge", "e", "a", "b"), cmd("pfcount", "e")}},
		{"wrong types", [][]string{
			cmd("set", "s", "hello"), cmd("pfadd", "s", "x"), cmd("pfcount", "s"), cmd("pfcount", "n", "s"),
			cmd("pfmerge", "d", "s"), cmd("pfmerge", "s", "n"), cmd("set", "i", "12345678901234567"), cmd("pfadd", "i"),
			cmd("set", "h", "HYLL"), cmd("pfadd", "h", "x"), cmd("set", "e", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), cmd("pfcount", "e"),
			cmd("set", "short", denseBytes[:DenseSize-1]), cmd("pfcount", "short"), cmd("set", "long", denseBytes+"x"), cmd("pfadd", "long", "a"),
		}},
		{"promotion by size", [][]string{addCmd("a", elems("e", 0, 500)...), cmd("pfcount", "a"), addCmd("a", elems("e", 500, 2000)...), cmd("pfcount", "a"), addCmd("a", elems("e", 2000, 2100)...)}},
		{"merges", [][]string{
			addCmd("a", elems("a", 0, 100)...), addCmd("b", elems("b", 0, 5000)...), addCmd("c", elems("a", 50, 300)...),
			cmd("pfmerge", "ab", "a", "b"), cmd("pfmerge", "ac", "a", "c"), cmd("pfmerge", "c", "a"), cmd("pfcount", "a", "b", "c"),
			cmd("pfmerge", "a", "a"), cmd("pfcount", "a"), cmd("pfmerge", "ac"), cmd("pfcount", "ac"), cmd("pfmerge", "c", "b", "missing"), cmd("pfcount", "c"),
		}},
		{"set dense and sparse", [][]string{
			cmd("set", "d", denseBytes), cmd("pfcount", "d"), cmd("pfadd", "d", "x", "y"), cmd("pfcount", "d"),
			cmd("set", "one", odd+"\x40\x00"+"\x7f\xfe"), addCmd("one", elems("z", 0, 20)...), cmd("pfcount", "one"),
			cmd("set", "runs", odd+"\x00\x7f\xfd"+"\x80"), addCmd("runs", elems("r", 0, 40)...), cmd("pfcount", "runs"),
			cmd("set", "vals", odd+"\x83\x87\x80\x7f\xf8"), addCmd("vals", elems("v", 0, 30)...), cmd("pfmerge", "vals", "one"), cmd("pfcount", "vals"),
		}},
		{"corrupted", [][]string{
			cmd("set", "short", odd+"\x7f\xfe"), cmd("pfcount", "short"), cmd("pfcount", "short", "x"), cmd("pfmerge", "d", "short"), cmd("pfadd", "short"),
			cmd("set", "over", odd+"\x7f\xff\x80"), cmd("pfcount", "over"), cmd("pfmerge", "d2", "over"),
			cmd("set", "cut", odd+"\x40"), cmd("pfcount", "cut"), cmd("pfmerge", "d3", "cut"),
			cmd("set", "cached", odd+"\x00\x00\x00\x00\x05\x00\x00\x00\x00"), cmd("pfcount", "cached"),
			cmd("set", "nil", odd), cmd("pfcount", "nil"), cmd("pfmerge", "d4", "nil"),
		}},
	}
	var oneByOne [][]string
	for _, e := range elems("o", 0, 2500) {
		oneByOne = append(oneByOne, addCmd("a", e))
	}
	cases = append(cases, struct {
		name string
		cmds [][]string
	}{"promotion one by one", oneByOne})
	rdb := testredis.Start(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, rdb.FlushAll(t.Context()).Err())
			compare(t, rdb, model{}, tc.cmds)
		})
	}
}

// Random sequences over a few keys, sparse and dense, with merges and
// counts between them.
func TestRandomAgainstRedis(t *testing.T) {
	rdb := testredis.Start(t)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", "d"}
	for round := range 6 {
		require.NoError(t, rdb.FlushAll(t.Context()).Err())
		var cmds [][]string
		for range 60 {
			k := keys[rng.IntN(len(keys))]
			switch r := rng.IntN(10); {
			case r < 6:
				n := rng.IntN([]int{1, 10, 100, 2000}[rng.IntN(4)])
				base := rng.IntN(20000)
				cmds = append(cmds, addCmd(k, elems(fmt.Sprintf("r%d-", round), base, base+n)...))
			case r < 8:
				ks := []string{k}
				for range rng.IntN(3) {
					ks = append(ks, keys[rng.IntN(len(keys))])
				}
				cmds = append(cmds, cmd("pfcount", ks...))
			default:
				ks := []string{k}
				for range rng.IntN(3) {
					ks = append(ks, keys[rng.IntN(len(keys))])
				}
				cmds = append(cmds, cmd("pfmerge", ks...))
			}
		}
		compare(t, rdb, model{}, cmds)
	}
}

// Cardinalities from 1 to 200,000 count as Redis counts them, dense
// values compared byte for byte.
func TestCardinalitiesAgainstRedis(t *testing.T) {
	rdb := testredis.Start(t)
	m := model{}
	var cmds [][]string
	at := 0
	for _, n := range []int{1, 2, 3, 5, 10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000, 200000} {
		for at < n {
			next := min(n, at+5000)
			cmds = append(cmds, addCmd("k", elems("c", at, next)...))
			at = next
		}
		cmds = append(cmds, cmd("pfcount", "k"), cmd("pfcount", "k", "missing"))
	}
	compare(t, rdb, m, cmds)
}

func addCmd(key string, es ...string) []string { return append([]string{"pfadd", key}, es...) }
