package resp

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// errSaving is Redis's reply to a second BGSAVE.
//
//lint:ignore ST1005 Redis's reply, word for word
var errSaving = errors.New("Background save already in progress")

// countingSaver stands for the server's backups: it counts what was asked.
type countingSaver struct {
	saves, background atomic.Int32
	last              atomic.Int64
	busy              atomic.Bool
}

func (s *countingSaver) Save(context.Context) error {
	s.saves.Add(1)
	s.last.Store(1_700_000_000)
	return nil
}

func (s *countingSaver) BackgroundSave() error {
	if s.busy.Load() {
		return errSaving
	}
	s.background.Add(1)
	return nil
}

func (s *countingSaver) LastSave() int64 { return s.last.Load() }

// With a Saver, SAVE and BGSAVE make backups through it, for read-write
// tokens only; LASTSAVE is its last one (the server's start before any);
// its refusal of a second BGSAVE is the reply.
func TestSaverTakesSaveAndBGSave(t *testing.T) {
	sv := &countingSaver{}
	addr, _ := start(t, Options{Tokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}, Saver: sv})
	ctx := t.Context()
	ro := redis.NewClient(&redis.Options{Addr: addr, Password: "ro"})
	defer ro.Close()
	require.ErrorContains(t, ro.BgSave(ctx).Err(), "NOPERM")
	require.ErrorContains(t, ro.Save(ctx).Err(), "NOPERM")
	started := ro.LastSave(ctx).Val()
	require.Positive(t, started, "before any backup, the server's start")

	rw := redis.NewClient(&redis.Options{Addr: addr, Password: "rw"})
	defer rw.Close()
	require.Equal(t, "Background saving started", rw.BgSave(ctx).Val())
	sv.busy.Store(true)
	require.EqualError(t, rw.BgSave(ctx).Err(), "ERR Background save already in progress")
	require.Equal(t, "OK", rw.Save(ctx).Val())
	require.Equal(t, int64(1_700_000_000), rw.LastSave(ctx).Val())
	require.Equal(t, int32(1), sv.background.Load())
	require.Equal(t, int32(1), sv.saves.Load())
}
