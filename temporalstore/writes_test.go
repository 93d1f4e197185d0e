package temporalstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// OnWrite's hook sees every applied write, whatever path ran it (Execute,
// a pipelined run of SETs in ExecuteBatch, a transaction, whose reads it
// makes inside the transaction), and no read or failed write; cancel
// stops it.
func TestOnWrite(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_700_000_000, 0)))
	defer e.Close()
	ctx := t.Context()
	var mu sync.Mutex
	var seen []string
	cancel := e.OnWrite(func(ctx context.Context, c *Command, r Response, v WriteView) {
		// A read where the write ran: inside Atomic this would wait for
		// the transaction's own lock if made outside it.
		key := c.Key
		if key == nil {
			key = c.Keys[0]
		}
		ex, err := v.Execute(ctx, Command{Namespace: c.Namespace, Table: c.Table, Kind: KindExistsKeys, Keys: [][]byte{key}})
		require.NoError(t, err)
		mu.Lock()
		seen = append(seen, string(c.Kind)+" "+string(key)+" "+map[bool]string{true: "exists", false: "gone"}[ex.Int == 1])
		mu.Unlock()
	})
	_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte("{a}1"), Value: []byte("v")})
	require.NoError(t, err)
	_, err = e.Execute(ctx, Command{Kind: KindGet, Key: []byte("{a}1")})
	require.NoError(t, err)
	_, err = e.Execute(ctx, Command{Kind: KindLPush, Key: []byte("{a}1"), Args: [][]byte{[]byte("x")}})
	require.ErrorIs(t, err, ErrWrongType)
	_, errs := e.ExecuteBatch(ctx, []Command{
		{Kind: KindSet, Key: []byte("{a}2"), Value: []byte("v")},
		{Kind: KindSet, Key: []byte("{a}3"), Value: []byte("v")},
	})
	require.Equal(t, []error{nil, nil}, errs)
	require.NoError(t, e.Atomic(ctx, "", "", []byte("{a}x"), func(tx *Tx) error {
		_, err := tx.Execute(ctx, Command{Kind: KindDeleteKeys, Keys: [][]byte{[]byte("{a}1")}})
		return err
	}))
	cancel()
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte("{a}4"), Value: []byte("v")})
	require.NoError(t, err)
	require.Equal(t, []string{"set {a}1 exists", "set {a}2 exists", "set {a}3 exists", "delete {a}1 gone", "delete_keys {a}1 gone"}, seen)
}
