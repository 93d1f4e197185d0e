package temporalstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Commands inside Atomic are isolated: a concurrent reader sees either
// none or all of the transaction's writes, never some.
func TestAtomicIsolatesItsWrites(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	ctx := t.Context()
	exec(t, e, Command{Kind: KindMSet, Keys: bs("{a}x", "{a}y"), Args: bs("0", "0")})
	stop, reading := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	torn, reads := 0, 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := e.Execute(ctx, Command{Kind: KindMGet, Keys: bs("{a}x", "{a}y")})
			if err != nil {
				panic(err)
			}
			reads++
			if reads == 1 {
				close(reading)
			}
			if string(r.Values[0]) != string(r.Values[1]) {
				torn++
			}
		}
	}()
	// The transactions start once the reader reads: 100 of them on the
	// in-memory log can finish before it is scheduled at all.
	<-reading
	for range 100 {
		require.NoError(t, e.Atomic(ctx, "", "", []byte("{a}x"), func(tx *Tx) error {
			if _, err := tx.Execute(ctx, Command{Kind: KindIncrBy, Key: b("{a}x"), Delta: 1}); err != nil {
				return err
			}
			if _, err := tx.Execute(ctx, Command{Kind: KindSet, Key: b("{a}z"), Value: b("plain set")}); err != nil {
				return err
			}
			_, err := tx.Execute(ctx, Command{Kind: KindIncrBy, Key: b("{a}y"), Delta: 1})
			return err
		}))
	}
	close(stop)
	wg.Wait()
	require.Positive(t, reads)
	require.Zero(t, torn, "a reader saw half a transaction")
	require.Equal(t, "100", string(exec(t, e, Command{Kind: KindGet, Key: b("{a}y")}).Value))

	v1, err := e.KeyVersion(ctx, "", "", b("{a}x"))
	require.NoError(t, err)
	require.Positive(t, v1)
	v0, err := e.KeyVersion(ctx, "", "", b("nope"))
	require.NoError(t, err)
	require.Zero(t, v0)
	exec(t, e, Command{Kind: KindSet, Key: b("{a}x"), Value: b("1")})
	v2, err := e.KeyVersion(ctx, "", "", b("{a}x"))
	require.NoError(t, err)
	require.NotEqual(t, v1, v2)
	exec(t, e, Command{Kind: KindSAdd, Key: b("s"), Args: bs("m")})
	s1, _ := e.KeyVersion(ctx, "", "", b("s"))
	exec(t, e, Command{Kind: KindSAdd, Key: b("s"), Args: bs("n")})
	s2, _ := e.KeyVersion(ctx, "", "", b("s"))
	require.NotEqual(t, s1, s2)
}

// A watch sees every write of its key after WatchKey, even one undone
// since, and nothing else; two watchers of a key each release their own.
func TestWatchKeyNotesWrites(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	ctx := t.Context()
	watch := func(key string) Watch {
		w, err := e.WatchKey(ctx, "", "", []byte(key))
		require.NoError(t, err)
		return w
	}
	touched := func(ctx context.Context, w Watch) bool {
		b, err := e.Touched(ctx, w)
		require.NoError(t, err)
		return b
	}
	exec(t, e, Command{Kind: KindSet, Key: []byte("before"), Value: []byte("v")})
	a, b := watch("k"), watch("k")
	other := watch("other")
	require.False(t, touched(ctx, a))
	exec(t, e, Command{Kind: KindSet, Key: []byte("k"), Value: []byte("v")})
	exec(t, e, Command{Kind: KindDelete, Key: []byte("k")})
	require.True(t, touched(ctx, a), "created and deleted again")
	require.True(t, touched(ctx, b))
	require.False(t, touched(ctx, other))
	// A delete of an absent key touches nothing.
	exec(t, e, Command{Kind: KindDelete, Key: []byte("other")})
	require.False(t, touched(ctx, other))
	e.Unwatch(a)
	c := watch("k") // after the writes: untouched, and b still sees them
	require.False(t, touched(ctx, c))
	require.True(t, touched(ctx, b))
	// Inside Atomic, through its transaction.
	require.NoError(t, e.Atomic(ctx, "", "", []byte("k"), func(tx *Tx) error {
		_, err := tx.Execute(ctx, Command{Kind: KindHSet, Key: []byte("k"), Args: bs("f", "1")})
		require.NoError(t, err)
		got, err := tx.Touched(ctx, c)
		require.NoError(t, err)
		require.True(t, got)
		return nil
	}))
	e.Unwatch(b)
	e.Unwatch(c)
	e.Unwatch(other)
	_, err := e.Touched(ctx, Watch{})
	require.ErrorIs(t, err, ErrInvalid)
}

// The transaction is the Tx, not a context: a callback that runs its
// commands with the context Atomic was given (which deadlocked when the
// transaction travelled in the callback's context) completes, a nested
// Atomic on the same shard joins it, and a Tx kept past its Atomic is
// refused.
func TestAtomicCallbackUsesTheOuterContext(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	outer := t.Context()
	var kept *Tx
	done := make(chan error, 1)
	go func() {
		done <- e.Atomic(outer, "", "", []byte("{t}a"), func(tx *Tx) error {
			kept = tx
			if _, err := tx.Execute(outer, Command{Kind: KindSet, Key: []byte("{t}a"), Value: []byte("1")}); err != nil {
				return err
			}
			return tx.Atomic(outer, "", "", []byte("{t}b"), func(inner *Tx) error {
				_, err := inner.Execute(outer, Command{Kind: KindIncrBy, Key: []byte("{t}b"), Delta: 5})
				return err
			})
		})
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Atomic did not return: the callback's commands wait for the shard it holds")
	}
	require.Equal(t, "1", string(exec(t, e, Command{Kind: KindGet, Key: []byte("{t}a")}).Value))
	require.Equal(t, "5", string(exec(t, e, Command{Kind: KindGet, Key: []byte("{t}b")}).Value))
	_, err := kept.Execute(outer, Command{Kind: KindGet, Key: []byte("{t}a")})
	require.ErrorIs(t, err, ErrTxDone)
}

// Inside Atomic every way a call finds its shard finds the held one: the
// multi-key kinds, a kind reading another key's shard (CMANAGER),
// AppendGet, KeyVersion, Touched, a copy to another database, a nested
// Atomic on another shard that reads back into this one. None of them waits for the
// shard the callback holds.
func TestAtomicReachesItsShardByEveryPath(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	ctx := t.Context()
	other, err := e.CreateDatabase(ctx, "", "", 1)
	require.NoError(t, err)
	exec(t, e, Command{Kind: KindSet, Key: []byte("{t}a"), Value: []byte("1")})
	w, err := e.WatchKey(ctx, "", "", []byte("{t}a"))
	require.NoError(t, err)
	defer e.Unwatch(w)
	done := make(chan error, 1)
	go func() {
		done <- e.Atomic(ctx, "", "", []byte("{t}a"), func(tx *Tx) error {
			steps := []Command{
				{Kind: KindMSet, Keys: bs("{t}b", "{t}c"), Args: bs("2", "3")},
				{Kind: KindMGet, Keys: bs("{t}a", "{t}b", "{t}c")},
				{Kind: KindExistsKeys, Keys: bs("{t}a", "{t}b")},
				{Kind: KindDeleteKeys, Keys: bs("{t}c")},
				{Kind: KindCManager, Key: []byte("{t}ctl")},
				{Kind: KindSInterStore, Dest: []byte("{t}s"), Keys: bs("{t}x", "{t}y")},
			}
			for _, c := range steps {
				if _, err := tx.Execute(ctx, c); err != nil {
					return fmt.Errorf("%s: %w", c.Kind, err)
				}
			}
			if v, found, err := tx.AppendGet(ctx, "", "", "", []byte("{t}b"), nil); err != nil || !found || string(v) != "2" {
				return fmt.Errorf("AppendGet: %q %v %w", v, found, err)
			}
			if _, err := tx.KeyVersion(ctx, "", "", []byte("{t}a")); err != nil {
				return err
			}
			if _, err := tx.Touched(ctx, w); err != nil {
				return err
			}
			if ok, err := tx.CopyBetween(ctx, "", "", other, []byte("{t}a"), []byte("{t}a"), false, false); err != nil || !ok {
				return fmt.Errorf("CopyBetween: %v %w", ok, err)
			}
			return tx.Atomic(ctx, "", "", []byte("elsewhere"), func(inner *Tx) error {
				_, err := inner.Execute(ctx, Command{Kind: KindMGet, Keys: bs("{t}a", "elsewhere")})
				return err
			})
		})
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Atomic did not return: a call inside it waited for the shard it holds")
	}
	r := exec(t, e, Command{Kind: KindMGet, Keys: bs("{t}a", "{t}b", "{t}c")})
	require.Equal(t, [][]byte{[]byte("1"), []byte("2"), nil}, r.Values)
	r = exec(t, e, Command{Table: other, Kind: KindGet, Key: []byte("{t}a")})
	require.Equal(t, "1", string(r.Value))
}
