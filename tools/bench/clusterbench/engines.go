package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// runSharedEngines is seed 000's shape of the shared-storage cell: three
// engines in this one process, each with its own data directory, keeping
// every shard's log in one shared directory (a sharedlog.DirStore).
// Engine 1 writes every shard (the seed's single primary); the writers
// call its Execute(SET) directly, each SET acknowledged once its append
// is fdatasynced there; engines 2 and 3 replay the shared log. After each
// load it waits for them to apply all of it and records how long that
// took.
func runSharedEngines(ctx context.Context, cfg Config, dir string, repeat int, log *slog.Logger) ([]loadResult, []float64, error) {
	store, err := sharedlog.NewDirStore(filepath.Join(dir, "shared-engines"))
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var engines []*temporalstore.Engine
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()
	for i := range 3 {
		logs, err := sharedlog.New(sharedlog.Options{
			Store: store, Member: strconv.Itoa(i + 1), Logger: quiet,
			Prefer: func(storage.LogOptions) bool { return i == 0 },
		})
		if err != nil {
			return nil, nil, err
		}
		e, err := temporalstore.Open(ctx, temporalstore.Options{
			Dir: filepath.Join(dir, fmt.Sprint("engine-", i+1)), OpenLog: logs.OpenLog, Logger: quiet,
			DefaultTableOptions: temporalstore.TableOptions{Shards: cfg.Shards, SlotRouting: true},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("engine %d: %w", i+1, err)
		}
		engines = append(engines, e)
	}
	value := randomValue(cfg.ValueBytes, uint64(repeat))
	set := func(ctx context.Context, key string) error {
		_, err := engines[0].Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte(key), Value: value})
		return err
	}
	// Engine 1 takes every shard as it opens; make sure before timing.
	for i := range 64 * cfg.Shards {
		if err := set(ctx, writeKey(i)); err != nil {
			return nil, nil, fmt.Errorf("engine 1 does not write every shard: %w", err)
		}
	}
	var loads []loadResult
	var converge []float64
	for _, n := range cfg.SharedWriters {
		op := writeOp(n, cfg.Keyspace, uint64(repeat), func(ctx context.Context, _ int, key string) error { return set(ctx, key) })
		res, err := runLoad(ctx, n, cfg.Warmup, cfg.Duration, nil, op)
		if err != nil {
			return nil, nil, fmt.Errorf("in-process shared-storage writes at %d writers: %w", n, err)
		}
		loads = append(loads, res)
		start := time.Now()
		if err := caughtUp(ctx, engines, cfg.Shards); err != nil {
			return nil, nil, err
		}
		converge = append(converge, ms(time.Since(start)))
		logLoad(log, SystemShared, repeat, fmt.Sprintf("in-process write w=%d", n), res)
	}
	return loads, converge, nil
}

// runSharedCeilings runs runSharedCeiling at every writer count.
func runSharedCeilings(ctx context.Context, cfg Config, dir string, repeat int, log *slog.Logger) ([]loadResult, error) {
	var out []loadResult
	for _, n := range cfg.SharedWriters {
		res, err := runSharedCeiling(ctx, cfg, dir, n)
		if err != nil {
			return nil, fmt.Errorf("shared-storage ceiling at %d writers: %w", n, err)
		}
		out = append(out, res)
		logLoad(log, SystemShared, repeat, fmt.Sprintf("ceiling (append+fdatasync only) w=%d", n), res)
	}
	return out, nil
}

// caughtUp waits until engines 2 and 3 applied every record engine 1's
// shards hold.
func caughtUp(ctx context.Context, engines []*temporalstore.Engine, shards int) error {
	deadline := time.Now().Add(time.Minute)
	for sh := range shards {
		_, want, err := engines[0].ShardProgress(temporalstore.DefaultNamespace, temporalstore.DefaultTable, sh)
		if err != nil {
			return err
		}
		for _, e := range engines[1:] {
			for {
				applied, _, err := e.ShardProgress(temporalstore.DefaultNamespace, temporalstore.DefaultTable, sh)
				if err != nil {
					return err
				}
				if applied >= want {
					break
				}
				if time.Now().After(deadline) {
					return errors.New("a replaying engine did not catch up within a minute")
				}
				sleep(ctx, time.Millisecond)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	return nil
}
