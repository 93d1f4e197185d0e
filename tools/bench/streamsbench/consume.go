package streamsbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The consume workload's stream and group.
const (
	consumeKey   = "s"
	consumeGroup = "g"
	// preloadBatch is how many XADDs a preload connection writes before
	// it reads their replies.
	preloadBatch = 100
)

// preload fills key with n entries of size random bytes over conns
// connections, each pipelining preloadBatch XADDs at a time, logging the
// progress every 2 s. Several connections, not one: a server that answers
// one connection's pipelined XADDs one fsync after another (ours does)
// would take minutes over a million entries on one.
func preload(ctx context.Context, addr, key string, n, size, conns int, seed uint64, log *slog.Logger) error {
	cs, err := dialAll(ctx, addr, conns)
	if err != nil {
		return err
	}
	defer closeAll(cs)
	var done atomic.Int64
	stop := logPreload(&done, n, log)
	defer stop()
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		share := n / len(cs)
		if i < n%len(cs) {
			share++
		}
		wg.Go(func() {
			if err := preloadShare(c, key, share, size, newRandomSource(seed, 1<<32+uint64(i), size), &done); err != nil {
				errs[i] = fmt.Errorf("preload connection %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// preloadShare XADDs n entries over c, preloadBatch at a time.
func preloadShare(c *conn, key string, n, size int, values *randomSource, done *atomic.Int64) error {
	for sent := 0; sent < n; {
		batch := min(preloadBatch, n-sent)
		for range batch {
			c.writeArray(5)
			c.writeBulkString("XADD")
			c.writeBulkString(key)
			c.writeBulkString("*")
			c.writeBulkString("f")
			c.writeBulk(values.next(size))
		}
		if err := c.flush(); err != nil {
			return err
		}
		for range batch {
			if err := c.skip(); err != nil {
				return err
			}
		}
		sent += batch
		done.Add(int64(batch))
	}
	return nil
}

// logPreload logs done's progress every 2 s, and once more when stopped.
func logPreload(done *atomic.Int64, n int, log *slog.Logger) (stop func()) {
	began := time.Now()
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				log.Info("preload", "entries", done.Load(), "of", n, "elapsed", time.Since(began).Round(time.Millisecond))
			case <-quit:
				log.Info("preload", "entries", done.Load(), "of", n, "elapsed", time.Since(began).Round(time.Millisecond))
				return
			}
		}
	}()
	return func() { close(quit); <-exited }
}

// consumer is one connection reading the group with XREADGROUP ... > and
// acknowledging each batch with XACK.
type consumer struct {
	c        *conn
	name     string
	count    string
	acked    int
	rounds   []time.Duration
	finished time.Time
}

// round reads a batch and acknowledges it; it returns the batch's size, 0
// once the group has delivered the whole stream.
func (k *consumer) round() (int, error) {
	v, err := k.c.do("XREADGROUP", "GROUP", consumeGroup, k.name, "COUNT", k.count, "STREAMS", consumeKey, ">")
	if err != nil {
		return 0, fmt.Errorf("XREADGROUP: %w", err)
	}
	ids, err := entryIDs(v)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	k.c.writeArray(3 + len(ids))
	k.c.writeBulkString("XACK")
	k.c.writeBulkString(consumeKey)
	k.c.writeBulkString(consumeGroup)
	for _, id := range ids {
		k.c.writeBulk(id)
	}
	if err := k.c.flush(); err != nil {
		return 0, err
	}
	n, err := k.c.readInt()
	if err != nil {
		return 0, fmt.Errorf("XACK: %w", err)
	}
	if int(n) != len(ids) {
		return 0, fmt.Errorf("XACK of %d entries acknowledged %d", len(ids), n)
	}
	return len(ids), nil
}

// entryIDs picks the entry IDs out of an XREADGROUP reply of one stream:
// [[name, [[id, [field, value]], ...]]], or nil (or empty) when nothing
// is new.
func entryIDs(v value) ([][]byte, error) {
	if v.null || len(v.elems) == 0 {
		return nil, nil
	}
	if v.kind != '*' || len(v.elems) != 1 || len(v.elems[0].elems) != 2 {
		return nil, fmt.Errorf("XREADGROUP: unexpected reply shape (%d streams)", len(v.elems))
	}
	entries := v.elems[0].elems[1].elems
	ids := make([][]byte, len(entries))
	for i, e := range entries {
		if len(e.elems) != 2 || e.elems[0].kind != '$' {
			return nil, fmt.Errorf("XREADGROUP: entry %d is not [id, fields]", i)
		}
		ids[i] = e.elems[0].str
	}
	return ids, nil
}

// loop runs rounds until the group has nothing new.
func (k *consumer) loop() error {
	for {
		began := time.Now()
		n, err := k.round()
		if err != nil {
			return err
		}
		if n == 0 {
			k.finished = time.Now()
			return nil
		}
		k.rounds = append(k.rounds, time.Since(began))
		k.acked += n
	}
}

// runConsume is the consume workload against a RESP server at addr:
// preload cfg.ConsumeEntries entries, create the group at 0, then
// cfg.Consumers connections read and acknowledge until the stream is
// drained. The rate is entries read and acknowledged per second; the
// latencies are of one round (XREADGROUP and XACK of up to
// cfg.ConsumeCount entries).
func runConsume(ctx context.Context, cfg Config, addr string, pid int, log *slog.Logger) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := preload(ctx, addr, consumeKey, cfg.ConsumeEntries, cfg.EntryBytes, cfg.Clients, cfg.Seed, log); err != nil {
		return result{}, err
	}
	admin, err := dial(ctx, addr)
	if err != nil {
		return result{}, err
	}
	defer admin.Close()
	if _, err := admin.do("XGROUP", "CREATE", consumeKey, consumeGroup, "0"); err != nil {
		return result{}, fmt.Errorf("XGROUP CREATE: %w", err)
	}
	cs, err := dialAll(ctx, addr, cfg.Consumers)
	if err != nil {
		return result{}, err
	}
	defer closeAll(cs)
	consumers := make([]*consumer, len(cs))
	for i, c := range cs {
		consumers[i] = &consumer{c: c, name: "c" + strconv.Itoa(i), count: strconv.Itoa(cfg.ConsumeCount)}
	}
	cpu0, cpuErr := benchkit.ProcessCPU(pid)
	began := time.Now()
	errs := make([]error, len(consumers))
	var wg sync.WaitGroup
	for i, k := range consumers {
		wg.Go(func() { errs[i] = k.loop() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	return consumeResult(consumers, began, cfg.ConsumeEntries, cpuSince(pid, cpu0, cpuErr, cfg.ConsumeEntries))
}

// consumeResult checks every entry was acknowledged once and sums the
// consumers' figures.
func consumeResult(consumers []*consumer, began time.Time, entries int, cpuUs float64) (result, error) {
	acked, last := 0, began
	var rounds []time.Duration
	for _, k := range consumers {
		acked += k.acked
		rounds = append(rounds, k.rounds...)
		if k.finished.After(last) {
			last = k.finished
		}
	}
	if acked != entries {
		return result{}, fmt.Errorf("consumers acknowledged %d entries of %d", acked, entries)
	}
	seconds := last.Sub(began).Seconds()
	ps := benchkit.DurationPercentiles(rounds, 50, 99)
	return result{Rate: float64(acked) / seconds, P50Us: micros(ps[0]), P99Us: micros(ps[1]), Count: acked, Seconds: seconds, ServerCPUUs: cpuUs}, nil
}
