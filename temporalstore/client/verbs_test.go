package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// The typed verbs give the same answers in process and over HTTP, in
// MessagePack and JSON, and the engine's errors through them.
func TestTableVerbs(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	srv, _ := serve(t, clk, nil, nil)
	for name, c := range map[string]Client{
		"local":   NewLocal(newEngine(t, clk)),
		"msgpack": newHTTP(t, HTTPOptions{BaseURL: srv.URL}),
		"json":    newHTTP(t, HTTPOptions{BaseURL: srv.URL, Encoding: JSON}),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			tb := On(c, "", "")
			k := func(s string) string { return name + ":" + s }
			_, found, err := tb.Get(ctx, k("greeting"))
			require.NoError(t, err)
			require.False(t, found)
			require.NoError(t, tb.Set(ctx, k("greeting"), []byte("hello"), 0))
			v, found, err := tb.Get(ctx, k("greeting"))
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, "hello", string(v))

			n, err := tb.IncrBy(ctx, k("visits"), 5)
			require.NoError(t, err)
			require.Equal(t, int64(5), n)
			n, err = tb.IncrBy(ctx, k("visits"), -2)
			require.NoError(t, err)
			require.Equal(t, int64(3), n)
			_, err = tb.IncrBy(ctx, k("greeting"), 1)
			require.ErrorIs(t, err, ts.ErrNotInteger)

			n, err = tb.HSet(ctx, k("user"), "name", "Ada", "lang", "Go")
			require.NoError(t, err)
			require.Equal(t, int64(2), n)
			v, found, err = tb.HGet(ctx, k("user"), "lang")
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, "Go", string(v))
			_, err = tb.HSet(ctx, k("greeting"), "f", "v")
			require.ErrorIs(t, err, ts.ErrWrongType)

			n, err = tb.ZAdd(ctx, k("board"), Z{"ada", 10}, Z{"bob", 7})
			require.NoError(t, err)
			require.Equal(t, int64(2), n)
			zs, err := tb.ZRange(ctx, k("board"), 0, -1)
			require.NoError(t, err)
			require.Equal(t, []Z{{"bob", 7}, {"ada", 10}}, zs)

			require.NoError(t, tb.FAppend(ctx, k("clicks"), ts.Point{TS: 1000, Value: []byte("3")}, ts.Point{TS: 2000, Value: []byte("5")}))
			pts, err := tb.FQuery(ctx, k("clicks"), 0, 1500)
			require.NoError(t, err)
			require.Len(t, pts, 1)
			require.Equal(t, int64(1000), pts[0].TS)
			require.Equal(t, "3", string(pts[0].Value))
			sum, err := tb.FAgg(ctx, k("clicks"), 0, 9999, "sum")
			require.NoError(t, err)
			require.Equal(t, int64(8), sum)

			n, err = tb.Del(ctx, k("greeting"))
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
			n, err = tb.Del(ctx, k("user"), k("board"), k("absent"))
			require.NoError(t, err)
			require.Equal(t, int64(2), n)
			_, found, err = tb.Get(ctx, k("greeting"))
			require.NoError(t, err)
			require.False(t, found)
		})
	}
}
