package backup

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Status is what a Manager reports.
type Status struct {
	// Running is true while a backup runs; Target names it, Progress is
	// how far it is.
	Running  bool     `json:"running"`
	Target   string   `json:"target,omitempty"`
	Progress Progress `json:"progress"`
	// LastSave is when the last finished backup began (Redis's LASTSAVE);
	// zero before the first.
	LastSave time.Time `json:"last_save"`
	// LastTarget, LastBytes and LastTook describe it.
	LastTarget string        `json:"last_target,omitempty"`
	LastBytes  int64         `json:"last_bytes"`
	LastTook   time.Duration `json:"last_took_ns"`
	// LastError is the error of the last backup if it failed, else empty.
	LastError string `json:"last_error,omitempty"`
	// Backups and Failures count them since the Manager was made.
	Backups  int `json:"backups"`
	Failures int `json:"failures"`
}

// Manager runs one backup at a time in the background and reports on it.
type Manager struct {
	comps []Component
	log   *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	status Status
	last   *job // the running backup, or the last one
}

// job is one backup: done closes when it ends, with err its error.
type job struct {
	done chan struct{}
	err  error
}

// NewManager returns a Manager of backups of comps; log may be nil.
func NewManager(log *slog.Logger, comps ...Component) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{comps: comps, log: log, ctx: ctx, cancel: cancel}
}

// Start begins a backup into t and returns at once; ErrRunning while one
// runs. The backup ends with Close if it has not before. A target that is
// an io.Closer (an S3 one) is closed once the backup ends, or at once when
// refused.
func (m *Manager) Start(t Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.ctx.Err()
	if m.status.Running {
		err = ErrRunning
	}
	if err != nil {
		closeTarget(t)
		return err
	}
	m.status.Running, m.status.Target, m.status.Progress = true, t.String(), Progress{}
	j := &job{done: make(chan struct{})}
	m.last = j
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(j.done)
		defer closeTarget(t)
		m.log.Info("backup started", "target", t.String())
		man, err := Run(m.ctx, t, Options{Progress: func(p Progress) {
			m.mu.Lock()
			m.status.Progress = p
			m.mu.Unlock()
		}}, m.comps...)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.status.Running, j.err = false, err
		if err != nil {
			m.status.Failures++
			m.status.LastError = err.Error()
			m.log.Error("backup failed", "target", t.String(), "err", err)
			return
		}
		m.status.Backups++
		m.status.LastError = ""
		m.status.LastSave, m.status.LastTarget, m.status.LastBytes, m.status.LastTook = man.Created, t.String(), man.Bytes, man.Took
		m.log.Info("backup finished", "target", t.String(), "bytes", man.Bytes, "files", len(man.Files), "took", man.Took)
	}()
	return nil
}

// Wait waits for the running backup, if any, to end, or for ctx, and
// returns the error of the last backup (nil when it succeeded or there
// was none).
func (m *Manager) Wait(ctx context.Context) error {
	m.mu.Lock()
	j := m.last
	m.mu.Unlock()
	if j == nil {
		return nil
	}
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func closeTarget(t Target) {
	if c, ok := t.(io.Closer); ok {
		c.Close()
	}
}

// Status reports the running backup and the last one.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// Close stops a running backup (leaving no manifest, so it does not
// count) and waits for it.
func (m *Manager) Close() error {
	m.cancel()
	m.wg.Wait()
	return nil
}
