package walbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

// etcdLog drives etcd's WAL the way the etcd server does under concurrency:
// appends queue up while a Save is in flight, and one writer goroutine turns
// everything pending into the next w.Save(hardState, entries) call, which
// writes the entries and (unless SetUnsafeNoFsync) fdatasyncs once, then
// releases every waiter of that batch.
//
// The hard state passed is empty, so Save writes only the entry records; the
// etcd server also persists the commit index when it moves, which costs it a
// little more per batch. This is the peer's best case.
type etcdLog struct {
	w     *wal.WAL
	reqs  chan *etcdReq
	done  chan struct{}
	index uint64 // owned by the writer goroutine

	syncing bool // SyncAlways: every Save fdatasyncs
	saves   atomic.Uint64
	ticker  *dirSyncer // SyncInterval

	closeOnce sync.Once
	closeErr  error
}

type etcdReq struct {
	data []byte
	errc chan error
}

var etcdReqPool = sync.Pool{New: func() any { return &etcdReq{errc: make(chan error, 1)} }}

func openEtcd(dir string, o openOptions) (appender, error) {
	w, err := wal.Create(zap.NewNop(), filepath.Join(dir, "wal"), nil)
	if err != nil {
		return nil, err
	}
	l := &etcdLog{
		w:    w,
		reqs: make(chan *etcdReq, 1024),
		done: make(chan struct{}),
	}
	switch o.Sync {
	case SyncAlways:
		l.syncing = true
	case SyncInterval:
		w.SetUnsafeNoFsync()
		l.ticker = startDirSyncer(filepath.Join(dir, "wal"), o.Interval)
	case syncNever:
		w.SetUnsafeNoFsync()
	}
	go l.writer()
	return l, nil
}

func (l *etcdLog) Append(ctx context.Context, data []byte) error {
	r := etcdReqPool.Get().(*etcdReq)
	r.data = data
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		etcdReqPool.Put(r)
		return ctx.Err()
	}
	err := <-r.errc
	r.data = nil
	etcdReqPool.Put(r)
	return err
}

func (l *etcdLog) writer() {
	defer close(l.done)
	var batch []*etcdReq
	var ents []*raftpb.Entry
	term := uint64(1)
	for first := range l.reqs {
		batch = append(batch[:0], first)
	drain:
		for {
			select {
			case r, ok := <-l.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		ents = ents[:0]
		for _, r := range batch {
			l.index++
			idx := l.index
			ents = append(ents, &raftpb.Entry{Term: &term, Index: &idx, Data: r.data})
		}
		err := l.w.Save(&raftpb.HardState{}, ents)
		if l.syncing {
			l.saves.Add(1)
		}
		for _, r := range batch {
			r.errc <- err
		}
	}
}

func (l *etcdLog) fsyncs() uint64 {
	if l.ticker != nil {
		return l.ticker.count.Load()
	}
	return l.saves.Load()
}

// Close stops the writer (callers must have returned from Append) and closes
// the WAL, which syncs its tail.
func (l *etcdLog) Close() error {
	l.closeOnce.Do(func() {
		close(l.reqs)
		<-l.done
		if l.ticker != nil {
			l.closeErr = l.ticker.stop()
		}
		l.closeErr = errors.Join(l.closeErr, l.w.Close())
	})
	return l.closeErr
}

// dirSyncer gives a log without its own interval sync (etcd's WAL with
// SetUnsafeNoFsync) one: every interval it fdatasyncs the newest *.wal file
// in dir through a descriptor of its own (fdatasync on any descriptor of an
// inode flushes that inode). When a newer segment appears, the old one gets
// a last fdatasync before its descriptor is closed.
type dirSyncer struct {
	dir   string
	count atomic.Uint64
	quit  chan struct{}
	done  chan struct{}
	err   error

	name string
	f    *os.File
}

func startDirSyncer(dir string, every time.Duration) *dirSyncer {
	s := &dirSyncer{dir: dir, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
				if err := s.syncOnce(); err != nil && s.err == nil {
					s.err = err
				}
			}
		}
	}()
	return s
}

func (s *dirSyncer) syncOnce() error {
	newest, err := newestWAL(s.dir)
	if err != nil || newest == "" {
		return err
	}
	if newest != s.name {
		if s.f != nil {
			err = fileutil.Fdatasync(s.f)
			s.f.Close()
			s.count.Add(1)
		}
		f, oerr := os.Open(filepath.Join(s.dir, newest))
		if oerr != nil {
			return errors.Join(err, oerr)
		}
		s.name, s.f = newest, f
		if err != nil {
			return err
		}
	}
	s.count.Add(1)
	return fileutil.Fdatasync(s.f)
}

func (s *dirSyncer) stop() error {
	close(s.quit)
	<-s.done
	if s.f != nil {
		s.f.Close()
	}
	return s.err
}

// newestWAL returns the name of the highest-numbered *.wal file in dir
// (etcd names segments %016x-%016x.wal, so names sort by sequence).
func newestWAL(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".wal") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	return slices.Max(names), nil
}
