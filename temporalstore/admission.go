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

// tableAdmission holds a table's limits and its shards' states. The
// limiters are swapped whole when SetTableLimits changes a limit, so a
// command reads them without a lock.
type tableAdmission struct {
	read, write atomic.Pointer[limiter]
	shards      []shardAdmission
	// limited says some limit is set (read-only mode aside).
	limited atomic.Bool
}

type shardAdmission struct {
	rate     atomic.Pointer[limiter]
	readOnly atomic.Bool
	// staleRejects counts Feast row writes refused as stale.
	staleRejects atomic.Uint64
}

func newTableAdmission(o TableOptions) *tableAdmission {
	a := &tableAdmission{shards: make([]shardAdmission, o.Shards)}
	a.setLimits(nil, o)
	return a
}

// setLimits installs now's limits. With was, the limits in force, only the
// limiters whose limit changed are replaced (a new one starts with a full
// burst); without, all are made.
func (a *tableAdmission) setLimits(was *TableOptions, now TableOptions) {
	if was == nil || was.ReadQPS != now.ReadQPS {
		a.read.Store(newLimiter(now.ReadQPS, int(max(now.ReadQPS, 1))))
	}
	if was == nil || was.WriteQPS != now.WriteQPS {
		a.write.Store(newLimiter(now.WriteQPS, int(max(now.WriteQPS, 1))))
	}
	if was == nil || was.ShardRate != now.ShardRate || was.ShardBurst != now.ShardBurst {
		for i := range a.shards {
			a.shards[i].rate.Store(newLimiter(now.ShardRate, now.ShardBurst))
		}
	}
	a.limited.Store(now.ReadQPS > 0 || now.WriteQPS > 0 || now.ShardRate > 0)
}

// tenants holds the per-tenant limiters, made on first use: a tenant's own
// limit (SetTenantQPS) or else Options.TenantQPS.
type tenants struct {
	perSec float64
	mu     sync.Mutex
	m      map[string]*limiter
	// own are the tenants' own limits (Disabled: none); under mu.
	own map[string]float64
	// active says some tenant may be limited: without it no command
	// reads the clock for its tenant.
	active atomic.Bool
}

// rateLocked is tenant's limit a second, 0 for none.
func (t *tenants) rateLocked(name string) float64 {
	if q, ok := t.own[name]; ok {
		return max(q, 0)
	}
	return t.perSec
}

// setOwn replaces the tenants' own limits; their limiters are made
// again at their next command.
func (t *tenants) setOwn(own map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.own = own
	clear(t.m)
	active := t.perSec > 0
	for _, q := range own {
		active = active || q > 0
	}
	t.active.Store(active)
}

func (t *tenants) allow(name string, now time.Time) bool {
	if name == "" || !t.active.Load() {
		return true
	}
	t.mu.Lock()
	l, ok := t.m[name]
	if !ok {
		q := t.rateLocked(name)
		l = newLimiter(q, int(max(q, 1)))
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
	if !t.adm.limited.Load() && !e.tenants.active.Load() {
		return nil // no limits: no clock read on the command's path
	}
	now := e.opts.Now()
	if !e.tenants.allow(tenant, now) {
		return fmt.Errorf("%w: %q", ErrTenantQPS, tenant)
	}
	if write && !t.adm.write.Load().allow(now) {
		return ErrWriteQPS
	}
	if !write && !t.adm.read.Load().allow(now) {
		return ErrReadQPS
	}
	if !sa.rate.Load().allow(now) {
		return fmt.Errorf("%w: shard %d", ErrShardRate, shard)
	}
	return nil
}

// SetReadOnly puts a shard of a table in read-only mode (writes refused
// with ErrReadOnly) or takes it out, until the engine closes
// (SetTableReadOnly keeps the mode across restarts).
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
