package teststorage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// Fault is a storage fault Faults injects.
type Fault struct {
	// Err is what the failed appends, syncs and recoveries wrap: a
	// syscall.ENOSPC for a full disk, a syscall.EIO for a failing device.
	Err error
	// Written makes a failed append reach the log before it fails, as a
	// write whose fsync failed does: its records are in the log and were
	// never acknowledged. Otherwise nothing reaches the log, as when the
	// write itself failed.
	Written bool
	// Match, when set, limits the fault to the logs it accepts.
	Match func(storage.LogOptions) bool
}

// Faults opens logs that fail on demand, wrapping those of another
// OpenLogFunc. Like a real log, one that failed refuses appends until a
// Recover succeeds, and Recover fails while the fault lasts. Its logs are
// storage.Recoverers when the logs they wrap are. Safe for concurrent use.
type Faults struct {
	open     storage.OpenLogFunc
	mu       sync.Mutex
	fault    *Fault
	injected atomic.Int64
}

// NewFaults returns Faults over the logs open opens, failing nothing yet.
func NewFaults(open storage.OpenLogFunc) *Faults { return &Faults{open: open} }

// Set starts injecting f, replacing any fault set before.
func (f *Faults) Set(ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = &ft
}

// Clear stops injecting: the logs that failed recover at their next
// Recover.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = nil
}

// Injected counts the calls failed on purpose.
func (f *Faults) Injected() int64 { return f.injected.Load() }

// active returns the fault o's log meets now, if any.
func (f *Faults) active(o storage.LogOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault == nil || f.fault.Match != nil && !f.fault.Match(o) {
		return nil
	}
	f.injected.Add(1)
	return fmt.Errorf("teststorage: injected fault: %w", f.fault.Err)
}

func (f *Faults) written() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fault != nil && f.fault.Written
}

// OpenLog is the OpenLogFunc of the failing logs.
func (f *Faults) OpenLog(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	l, err := f.open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &faultLog{Log: l, f: f, o: o}, nil
}

// faultLog is a log that fails when its Faults says so.
type faultLog struct {
	storage.Log
	f *Faults
	o storage.LogOptions
	// failed is the error the log refuses appends with since it failed.
	mu     sync.Mutex
	failed error
}

func (l *faultLog) refusing() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

func (l *faultLog) fail(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil {
		l.failed = err
	}
	return err
}

// append runs do, the wrapped log's append of n records, unless the log
// refuses it or a fault fails it (after do, when the fault is Written).
func (l *faultLog) append(n int, do func() (uint64, error)) (uint64, error) {
	if err := l.refusing(); err != nil {
		return 0, err
	}
	ferr := l.f.active(l.o)
	if ferr == nil || n == 0 {
		return do()
	}
	// The index a real log gives a record it queued, then failed to write.
	idx := l.Log.LastIndex() + 1
	if l.f.written() {
		var err error
		if idx, err = do(); err != nil {
			return idx, err
		}
	}
	return idx, l.fail(ferr)
}

func (l *faultLog) Append(ctx context.Context, rec []byte) (uint64, error) {
	return l.append(1, func() (uint64, error) { return l.Log.Append(ctx, rec) })
}

func (l *faultLog) AppendBatch(ctx context.Context, recs [][]byte) (uint64, error) {
	return l.append(len(recs), func() (uint64, error) { return l.Log.AppendBatch(ctx, recs) })
}

func (l *faultLog) AppendGroup(ctx context.Context, recs [][]byte) (uint64, error) {
	return l.append(len(recs), func() (uint64, error) { return l.Log.AppendGroup(ctx, recs) })
}

func (l *faultLog) Sync(ctx context.Context) error {
	if err := l.refusing(); err != nil {
		return err
	}
	if err := l.f.active(l.o); err != nil {
		return l.fail(err)
	}
	return l.Log.Sync(ctx)
}

// Recover fails while the fault lasts; then the wrapped log recovers.
func (l *faultLog) Recover(ctx context.Context, last uint64) error {
	if err := l.f.active(l.o); err != nil {
		return err
	}
	r, ok := l.Log.(storage.Recoverer)
	if !ok {
		return errors.New("teststorage: the wrapped log cannot recover")
	}
	if err := r.Recover(ctx, last); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = nil
	return nil
}
