package backup

import (
	"context"
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
	done   chan struct{} // closed when the running backup ends
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
// runs. The backup ends with Close if it has not before.
func (m *Manager) Start(t Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.status.Running {
		return ErrRunning
	}
	if err := m.ctx.Err(); err != nil {
		return err
	}
	m.status.Running, m.status.Target, m.status.Progress = true, t.String(), Progress{}
	done := make(chan struct{})
	m.done = done
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(done)
		m.log.Info("backup started", "target", t.String())
		man, err := Run(m.ctx, t, Options{Progress: func(p Progress) {
			m.mu.Lock()
			m.status.Progress = p
			m.mu.Unlock()
		}}, m.comps...)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.status.Running = false
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

// Wait waits for the running backup, if any, to end, or for ctx.
func (m *Manager) Wait(ctx context.Context) error {
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
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
