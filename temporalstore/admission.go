package temporalstore

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// limiter is a token bucket on the engine's clock; nil admits everything.
type limiter struct{ l *rate.Limiter }

func newLimiter(perSec float64, burst int) *limiter {
	if perSec <= 0 {
		return nil
	}
	return &limiter{rate.NewLimiter(rate.Limit(perSec), max(burst, 1))}
}

func (l *limiter) allow(now time.Time) bool { return l == nil || l.l.AllowN(now, 1) }

// tableAdmission holds a table's limits and its shards' states.
type tableAdmission struct {
	read, write *limiter
	shards      []shardAdmission
	// limited says some limit is set (read-only mode aside).
	limited bool
}

type shardAdmission struct {
	rate     *limiter
	readOnly atomic.Bool
	// staleRejects counts Feast row writes refused as stale.
	staleRejects atomic.Uint64
}

func newTableAdmission(o TableOptions) *tableAdmission {
	a := &tableAdmission{
		read:   newLimiter(o.ReadQPS, int(max(o.ReadQPS, 1))),
		write:  newLimiter(o.WriteQPS, int(max(o.WriteQPS, 1))),
		shards: make([]shardAdmission, o.Shards),
	}
	for i := range a.shards {
		a.shards[i].rate = newLimiter(o.ShardRate, o.ShardBurst)
	}
	a.limited = a.read != nil || a.write != nil || o.ShardRate > 0
	return a
}

// tenants holds the per-tenant limiters, made on first use.
type tenants struct {
	perSec float64
	mu     sync.Mutex
	m      map[string]*limiter
}

func (t *tenants) allow(name string, now time.Time) bool {
	if t.perSec <= 0 || name == "" {
		return true
	}
	t.mu.Lock()
	l, ok := t.m[name]
	if !ok {
		l = newLimiter(t.perSec, int(max(t.perSec, 1)))
		t.m[name] = l
	}
	t.mu.Unlock()
	return l.allow(now)
}

// admit applies c's admission checks, in order: read-only mode, tenant,
// table QPS, shard rate.
func (e *Engine) admit(t *table, shard int, c *Command) error {
	return e.admitKind(t, shard, !IsReadKind(c.Kind), c.Tenant)
}

// admitKind is admit for a write or a read of tenant.
func (e *Engine) admitKind(t *table, shard int, write bool, tenant string) error {
	sa := &t.adm.shards[shard]
	if write && sa.readOnly.Load() {
		return fmt.Errorf("%w: shard %d", ErrReadOnly, shard)
	}
	if !t.adm.limited && e.tenants.perSec <= 0 {
		return nil // no limits: no clock read on the command's path
	}
	now := e.opts.Now()
	if !e.tenants.allow(tenant, now) {
		return fmt.Errorf("%w: %q", ErrTenantQPS, tenant)
	}
	if write && !t.adm.write.allow(now) {
		return ErrWriteQPS
	}
	if !write && !t.adm.read.allow(now) {
		return ErrReadQPS
	}
	if !sa.rate.allow(now) {
		return fmt.Errorf("%w: shard %d", ErrShardRate, shard)
	}
	return nil
}

// SetReadOnly puts a shard of a table in read-only mode (writes refused
// with ErrReadOnly) or takes it out.
func (e *Engine) SetReadOnly(namespace, name string, shard int, on bool) error {
	t, err := e.table(&Command{Namespace: namespace, Table: name})
	if err != nil {
		return err
	}
	if shard < 0 || shard >= len(t.shards) {
		return fmt.Errorf("%w: shard %d of %d", ErrInvalid, shard, len(t.shards))
	}
	t.adm.shards[shard].readOnly.Store(on)
	return nil
}
