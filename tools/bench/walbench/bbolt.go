package walbench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bboltBatch is the group-commit setting of bbolt's DB.Batch.
type bboltBatch struct {
	// MaxBatchDelay is how long Batch waits to gather more callers before
	// committing (bbolt's default is 10ms).
	MaxBatchDelay time.Duration
	// MaxBatchSize commits at once when this many callers are waiting
	// (bbolt's default is 1000).
	MaxBatchSize int
}

// MarshalJSON writes the delay as a duration string ("1ms").
func (b bboltBatch) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MaxBatchDelay string `json:"max_batch_delay"`
		MaxBatchSize  int    `json:"max_batch_size"`
	}{b.MaxBatchDelay.String(), b.MaxBatchSize})
}

var defaultBboltBatch = bboltBatch{MaxBatchDelay: 10 * time.Millisecond, MaxBatchSize: 1000}

var logBucket = []byte("log")

// boltLog appends to one bbolt bucket: key = big-endian uint64 from the
// bucket's sequence, value = payload, one DB.Batch per Append, so
// concurrent appends share a transaction and its commit. Keys are assigned
// inside the transaction, so they arrive in ascending order and the bucket
// is filled to 100% (FillPercent 1.0, bbolt's advice for append-only keys).
//
// bbolt is opened with NoFreelistSync and the hashmap freelist, as etcd
// opens it, and a 1 GiB initial mmap so the file never remaps during a run.
// Each commit issues (at least) two fdatasyncs, pages then meta page; the
// counted durability point is the commit.
type boltLog struct {
	db *bolt.DB

	commits atomic.Uint64 // committed write transactions (SyncAlways)
	lastTx  int           // guarded by bbolt's writer lock

	// SyncInterval
	syncs  atomic.Uint64
	quit   chan struct{}
	done   chan struct{}
	tickMu sync.Mutex
	tckErr error

	closeOnce sync.Once
	closeErr  error
}

func openBolt(batch bboltBatch) func(dir string, o openOptions) (appender, error) {
	return func(dir string, o openOptions) (appender, error) {
		db, err := bolt.Open(filepath.Join(dir, "log.db"), 0o600, &bolt.Options{
			Timeout:         time.Second,
			NoSync:          o.Sync != SyncAlways,
			NoFreelistSync:  true,
			FreelistType:    bolt.FreelistMapType,
			InitialMmapSize: 1 << 30,
		})
		if err != nil {
			return nil, err
		}
		db.MaxBatchDelay = batch.MaxBatchDelay
		db.MaxBatchSize = batch.MaxBatchSize
		if err := db.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(logBucket)
			return err
		}); err != nil {
			db.Close()
			return nil, err
		}
		l := &boltLog{db: db}
		if o.Sync == SyncInterval {
			l.quit = make(chan struct{})
			l.done = make(chan struct{})
			go l.syncLoop(o.Interval)
		}
		return l, nil
	}
}

func (l *boltLog) syncLoop(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.quit:
			return
		case <-t.C:
			l.syncs.Add(1)
			if err := l.db.Sync(); err != nil {
				l.tickMu.Lock()
				l.tckErr = errors.Join(l.tckErr, err)
				l.tickMu.Unlock()
			}
		}
	}
}

func (l *boltLog) Append(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.db.Batch(func(tx *bolt.Tx) error {
		if id := tx.ID(); id != l.lastTx {
			l.lastTx = id
			l.commits.Add(1)
		}
		b := tx.Bucket(logBucket)
		b.FillPercent = 1.0
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], seq)
		return b.Put(key[:], data)
	})
}

func (l *boltLog) fsyncs() uint64 {
	if l.quit != nil {
		return l.syncs.Load()
	}
	return l.commits.Load()
}

func (l *boltLog) Close() error {
	l.closeOnce.Do(func() {
		if l.quit != nil {
			close(l.quit)
			<-l.done
			l.closeErr = errors.Join(l.tckErr, l.db.Sync())
		}
		l.closeErr = errors.Join(l.closeErr, l.db.Close())
	})
	return l.closeErr
}
