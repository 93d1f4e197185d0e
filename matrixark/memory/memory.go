package memory

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

// Options configure New.
type Options struct {
	// Now is the clock of created_at, updated_at, history rows and
	// expiry. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// lockStripes spread tenants over write locks.
const lockStripes = 64

// applyChunk bounds the mutations of one Apply of a bulk delete (a
// memory's delete is three).
const applyChunk = 900

// Memories is the mem0 API of one Engine and its Store. Safe for
// concurrent use.
type Memories struct {
	e     *matrixark.Engine
	s     matrixark.Store
	o     Options
	seq   atomic.Uint32
	locks [lockStripes]sync.Mutex
}

// New returns the memories of Engine e, whose records live in s (the
// Engine's own Store).
func New(e *matrixark.Engine, s matrixark.Store, o Options) *Memories {
	return &Memories{e: e, s: s, o: o.withDefaults()}
}

// lock serialises tenant t's writes: Infer reads the dedup index before
// it writes.
func (m *Memories) lock(t string) *sync.Mutex { return &m.locks[h64.Sum(t)%lockStripes] }

func md5Sum(text string) [16]byte { return md5.Sum([]byte(text)) }

// Add remembers each message of r as one memory and returns those stored,
// in order. System messages and blank texts are skipped; with r.Infer a
// text already remembered in the scope, or repeated in r, is dropped.
func (m *Memories) Add(ctx context.Context, t string, r AddRequest) ([]Result, error) {
	if err := checkTenant(t); err != nil {
		return nil, err
	}
	sc, err := r.Scope.normalize()
	if err != nil {
		return nil, err
	}
	if sc.empty() {
		return nil, ErrNoIdentifier
	}
	if len(r.Messages) > matrixark.MaxMessages {
		return nil, invalid("more than %d messages", matrixark.MaxMessages)
	}
	for i, msg := range r.Messages {
		switch {
		case len(msg.Content) > matrixark.MaxTextBytes:
			return nil, invalid("messages[%d].content longer than %d bytes", i, matrixark.MaxTextBytes)
		case len(msg.Role) > matrixark.MaxNameBytes || len(msg.Name) > matrixark.MaxNameBytes:
			return nil, invalid("messages[%d] role or name longer than %d bytes", i, matrixark.MaxNameBytes)
		}
	}
	meta, err := cleanMetadata(r.Metadata)
	if err != nil {
		return nil, err
	}
	expires, err := parseExpiration(r.ExpirationDate)
	if err != nil {
		return nil, err
	}
	if r.TimestampMs < 0 {
		return nil, invalid("timestamp must not be negative")
	}
	created := m.o.Now()
	if r.TimestampMs > 0 {
		created = time.UnixMilli(r.TimestampMs)
	}

	mu := m.lock(t)
	mu.Lock()
	defer mu.Unlock()
	var recs []*record
	seen := map[[16]byte]bool{}
	for _, msg := range r.Messages {
		if msg.Role == "system" || strings.TrimSpace(msg.Content) == "" {
			continue
		}
		sum := md5Sum(msg.Content)
		if r.Infer {
			if seen[sum] {
				continue
			}
			seen[sum] = true
			dup, err := m.remembered(ctx, t, sc, sum, m.o.Now().UnixMilli())
			if err != nil {
				return nil, err
			}
			if dup {
				continue
			}
		}
		id, err := newUUID()
		if err != nil {
			return nil, fmt.Errorf("memory: uuid: %w", err)
		}
		rec := &record{Item: Item{ID: id, Memory: msg.Content, Hash: hex.EncodeToString(sum[:]), Metadata: meta,
			CreatedAt: isoTime(created), UpdatedAt: isoTime(created), UserID: sc.UserID, AgentID: sc.AgentID,
			RunID: sc.RunID, ActorID: msg.Name, Role: msg.Role}, ExpiresMs: expires}
		if rec.Node, err = m.ingest(ctx, t, rec, created.UnixMilli(), false); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return []Result{}, nil
	}

	// One Apply: the memories of a request become visible together, and
	// a text ingested without its record (a failed Apply) is never found.
	var b batch
	nowMs := m.o.Now().UnixMilli()
	out := make([]Result, 0, len(recs))
	for _, rec := range recs {
		b.put(itemKey(t, rec.ID), rec)
		b.m = append(b.m, matrixark.Mutation{Key: hashKey(t, sc, md5Sum(rec.Memory), rec.ID), Value: []byte{1}})
		m.putHistory(&b, t, rec, nowMs, HistoryRow{Event: EventAdd, NewMemory: rec.Memory})
		out = append(out, Result{ID: rec.ID, Memory: rec.Memory, Event: EventAdd, ActorID: rec.ActorID, Role: rec.Role})
	}
	if err := m.apply(ctx, &b); err != nil {
		return nil, err
	}
	return out, nil
}

// ingest puts rec's text into the Engine as one raw message of its scope,
// source and source_ref mem:{uuid}, and returns the node it lives in.
func (m *Memories) ingest(ctx context.Context, t string, rec *record, ms int64, update bool) (uint64, error) {
	ref := sourcePrefix + rec.ID
	res, err := m.e.Ingest(ctx, t, matrixark.Input{
		Kind: matrixark.KindChat, SourceID: ref,
		Messages: []matrixark.Message{{ID: ref, Role: rec.Role, Content: rec.Memory, Name: rec.ActorID, TimeMs: ms}},
		User:     rec.UserID, Session: rec.RunID, Agent: rec.AgentID, TimeMs: ms, Durable: true,
		// An update's node is new (the old one was forgotten); it gets
		// an L1 whatever the text's length.
		Batch: update,
	})
	return res.Node, err
}

// remembered says whether a visible memory of scope sc has the text of
// md5 sum.
func (m *Memories) remembered(ctx context.Context, t string, sc Scope, sum [16]byte, nowMs int64) (bool, error) {
	p := hashPrefix(t, sc, sum)
	var ids []string
	err := m.s.Scan(ctx, matrixark.PrefixRange(p), matrixark.ReadOpts{}, func(k, _ []byte) bool {
		ids = append(ids, string(k[len(p):]))
		return len(ids) < matrixark.MaxGetKeys
	})
	if err != nil {
		return false, err
	}
	recs, err := m.loadMany(ctx, t, ids)
	if err != nil {
		return false, err
	}
	hash := hex.EncodeToString(sum[:])
	for _, r := range recs {
		if r != nil && r.Hash == hash && r.UserID == sc.UserID && r.AgentID == sc.AgentID && r.RunID == sc.RunID &&
			!expired(r, nowMs) {
			return true, nil
		}
	}
	return false, nil
}

// Get returns the memory id, or nil when there is none (never was, or
// deleted). An expired memory is still returned.
func (m *Memories) Get(ctx context.Context, t, id string) (*Item, error) {
	if err := checkTenant(t); err != nil {
		return nil, err
	}
	id, ok := parseID(id)
	if !ok {
		return nil, nil
	}
	rec, err := m.load(ctx, t, id)
	if err != nil || rec == nil {
		return nil, err
	}
	return &rec.Item, nil
}

// GetAll returns the memories f selects, newest first. f must name at
// least one id.
func (m *Memories) GetAll(ctx context.Context, t string, f Filter) ([]Item, error) {
	if err := checkTenant(t); err != nil {
		return nil, err
	}
	mt, err := compile(f)
	if err != nil {
		return nil, err
	}
	n, err := limit(f.Limit, DefaultGetAllLimit)
	if err != nil {
		return nil, err
	}
	recs, err := m.scan(ctx, t, &mt, m.o.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	// Newest first: created_at is fixed-width ISO, so it orders as text.
	sortRecords(recs)
	out := make([]Item, 0, min(n, len(recs)))
	for _, r := range recs[:min(n, len(recs))] {
		out = append(out, r.Item)
	}
	return out, nil
}

// scan returns every memory of tenant t that mt selects.
func (m *Memories) scan(ctx context.Context, t string, mt *matcher, nowMs int64) ([]*record, error) {
	var out []*record
	var bad error
	err := m.s.Scan(ctx, matrixark.PrefixRange(tenantPrefix(famItem, t)), matrixark.ReadOpts{}, func(_, v []byte) bool {
		r := new(record)
		if bad = json.Unmarshal(v, r); bad != nil {
			return false
		}
		if mt.match(r, nowMs) {
			out = append(out, r)
		}
		return true
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// Update changes memory id: a new text is re-ingested (its created_at
// stays), metadata and expiry are replaced when given. It adds an UPDATE
// row. A missing memory is matrixark.ErrNotFound.
func (m *Memories) Update(ctx context.Context, t, id string, u UpdateRequest) error {
	if err := checkTenant(t); err != nil {
		return err
	}
	if u.Text == nil && u.Metadata == nil && u.ExpirationDate == nil {
		return invalid("nothing to update: give text, metadata or expiration_date")
	}
	if u.Text != nil {
		switch {
		case strings.TrimSpace(*u.Text) == "":
			return invalid("text must not be empty")
		case len(*u.Text) > matrixark.MaxTextBytes:
			return invalid("text longer than %d bytes", matrixark.MaxTextBytes)
		}
	}
	meta, err := cleanMetadata(u.Metadata)
	if err != nil {
		return err
	}
	var expires int64
	if u.ExpirationDate != nil {
		if expires, err = parseExpiration(*u.ExpirationDate); err != nil {
			return err
		}
	}
	rec, unlock, err := m.locked(ctx, t, id)
	if err != nil {
		return err
	}
	defer unlock()
	now := m.o.Now()
	sc := Scope{UserID: rec.UserID, AgentID: rec.AgentID, RunID: rec.RunID}
	old := rec.Memory
	var b batch
	if u.Text != nil {
		rec.Memory = *u.Text
		// The old text leaves the Engine, so context packs see only the
		// current one.
		if err := m.forget(ctx, t, rec.ID); err != nil {
			return err
		}
		if _, err := m.ingest(ctx, t, rec, now.UnixMilli(), true); err != nil {
			return err
		}
		sum := md5Sum(rec.Memory)
		rec.Hash = hex.EncodeToString(sum[:])
		b.m = append(b.m,
			matrixark.Mutation{Key: hashKey(t, sc, md5Sum(old), rec.ID), Delete: true},
			matrixark.Mutation{Key: hashKey(t, sc, sum, rec.ID), Value: []byte{1}})
	}
	if u.Metadata != nil {
		rec.Metadata = meta
	}
	if u.ExpirationDate != nil {
		rec.ExpiresMs = expires
	}
	rec.UpdatedAt = isoTime(now)
	b.put(itemKey(t, rec.ID), rec)
	m.putHistory(&b, t, rec, now.UnixMilli(), HistoryRow{Event: EventUpdate, OldMemory: old, NewMemory: rec.Memory,
		UpdatedAt: rec.UpdatedAt})
	return m.apply(ctx, &b)
}

// Delete removes memory id and adds a DELETE row; its history stays. A
// missing memory is matrixark.ErrNotFound.
func (m *Memories) Delete(ctx context.Context, t, id string) error {
	if err := checkTenant(t); err != nil {
		return err
	}
	rec, unlock, err := m.locked(ctx, t, id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.forget(ctx, t, rec.ID); err != nil {
		return err
	}
	var b batch
	m.deleteRecord(&b, t, rec, m.o.Now())
	return m.apply(ctx, &b)
}

// locked loads memory id with the tenant's writes held off until unlock;
// a missing or malformed id is matrixark.ErrNotFound.
func (m *Memories) locked(ctx context.Context, t, id string) (rec *record, unlock func(), err error) {
	id, ok := parseID(id)
	if !ok {
		return nil, nil, notFound(id)
	}
	mu := m.lock(t)
	mu.Lock()
	if rec, err = m.load(ctx, t, id); err == nil && rec == nil {
		err = notFound(id)
	}
	if err != nil {
		mu.Unlock()
		return nil, nil, err
	}
	return rec, mu.Unlock, nil
}

// forget takes memory id's text out of the Engine: no retrieval or pack
// finds it after.
func (m *Memories) forget(ctx context.Context, t, id string) error {
	_, err := m.e.Forget(ctx, t, matrixark.KindChat, sourcePrefix+id)
	return err
}

// DeleteAll deletes every memory of scope s (its ids ANDed; at least one
// required), expired ones too, and returns how many.
func (m *Memories) DeleteAll(ctx context.Context, t string, s Scope) (int, error) {
	if err := checkTenant(t); err != nil {
		return 0, err
	}
	mt, err := compile(Filter{Scope: s, ShowExpired: true})
	if err != nil {
		return 0, err
	}
	mu := m.lock(t)
	mu.Lock()
	defer mu.Unlock()
	recs, err := m.scan(ctx, t, &mt, 0)
	if err != nil {
		return 0, err
	}
	now := m.o.Now()
	done := 0
	for from := 0; from < len(recs); from += applyChunk / 3 {
		part := recs[from:min(from+applyChunk/3, len(recs))]
		var b batch
		for _, rec := range part {
			if err := m.forget(ctx, t, rec.ID); err != nil {
				return done, err
			}
			m.deleteRecord(&b, t, rec, now)
		}
		if err := m.apply(ctx, &b); err != nil {
			return done, err
		}
		done += len(part)
	}
	return done, nil
}

func (m *Memories) deleteRecord(b *batch, t string, rec *record, now time.Time) {
	sc := Scope{UserID: rec.UserID, AgentID: rec.AgentID, RunID: rec.RunID}
	b.m = append(b.m,
		matrixark.Mutation{Key: itemKey(t, rec.ID), Delete: true},
		matrixark.Mutation{Key: hashKey(t, sc, md5Sum(rec.Memory), rec.ID), Delete: true})
	m.putHistory(b, t, rec, now.UnixMilli(), HistoryRow{Event: EventDelete, OldMemory: rec.Memory,
		UpdatedAt: isoTime(now), IsDeleted: true})
}

// History returns memory id's rows, oldest first; none for an unknown id.
func (m *Memories) History(ctx context.Context, t, id string) ([]HistoryRow, error) {
	if err := checkTenant(t); err != nil {
		return nil, err
	}
	out := []HistoryRow{}
	id, ok := parseID(id)
	if !ok {
		return out, nil
	}
	var bad error
	err := m.s.Scan(ctx, matrixark.PrefixRange(histPrefix(t, id)), matrixark.ReadOpts{}, func(_, v []byte) bool {
		var h HistoryRow
		if bad = json.Unmarshal(v, &h); bad != nil {
			return false
		}
		out = append(out, h)
		return true
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// Reset deletes tenant t's memories, their texts in the Engine, their
// history and their dedup entries.
func (m *Memories) Reset(ctx context.Context, t string) error {
	if err := checkTenant(t); err != nil {
		return err
	}
	mu := m.lock(t)
	mu.Lock()
	defer mu.Unlock()
	for _, fam := range []string{famItem, famHash, famHist} {
		// A reset is a sweep: its reads must not fill caches.
		var keys [][]byte
		err := m.s.Scan(ctx, matrixark.PrefixRange(tenantPrefix(fam, t)), matrixark.ReadOpts{NoFill: true},
			func(k, _ []byte) bool {
				keys = append(keys, append([]byte(nil), k...))
				return true
			})
		if err != nil {
			return err
		}
		if fam == famItem {
			prefix := len(tenantPrefix(famItem, t))
			for _, k := range keys {
				if err := m.forget(ctx, t, string(k[prefix:])); err != nil {
					return err
				}
			}
		}
		for from := 0; from < len(keys); from += applyChunk {
			var b batch
			for _, k := range keys[from:min(from+applyChunk, len(keys))] {
				b.m = append(b.m, matrixark.Mutation{Key: k, Delete: true})
			}
			if err := m.apply(ctx, &b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Memories) load(ctx context.Context, t, id string) (*record, error) {
	recs, err := m.loadMany(ctx, t, []string{id})
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// loadMany reads the records of ids, nil where there is none, in reads of
// at most MaxGetKeys keys.
func (m *Memories) loadMany(ctx context.Context, t string, ids []string) ([]*record, error) {
	out := make([]*record, 0, len(ids))
	for from := 0; from < len(ids); from += matrixark.MaxGetKeys {
		part := ids[from:min(from+matrixark.MaxGetKeys, len(ids))]
		keys := make([][]byte, len(part))
		for i, id := range part {
			keys[i] = itemKey(t, id)
		}
		vals, err := m.s.Get(ctx, keys, matrixark.ReadOpts{})
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			if v == nil {
				out = append(out, nil)
				continue
			}
			r := new(record)
			if err := json.Unmarshal(v, r); err != nil {
				return nil, fmt.Errorf("memory: record %s: %w", part[i], err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// putHistory adds row h of rec to b, keyed by write time.
func (m *Memories) putHistory(b *batch, t string, rec *record, nowMs int64, h HistoryRow) {
	id, err := newUUID()
	if err != nil {
		b.err = fmt.Errorf("memory: uuid: %w", err)
		return
	}
	h.ID, h.MemoryID, h.CreatedAt, h.ActorID, h.Role = id, rec.ID, rec.CreatedAt, rec.ActorID, rec.Role
	b.put(histKey(t, rec.ID, nowMs, m.seq.Add(1)), h)
}

// apply writes b durably: memories and their history are never acknowledged
// before they survive a crash.
func (m *Memories) apply(ctx context.Context, b *batch) error {
	if b.err != nil {
		return b.err
	}
	if len(b.m) == 0 {
		return nil
	}
	return m.s.Apply(ctx, b.m, matrixark.WriteOpts{Durable: true})
}

func notFound(id string) error { return fmt.Errorf("%w: memory %q", matrixark.ErrNotFound, id) }

// batch gathers the mutations of one Apply, values encoded as JSON; the
// first encoding error stops it.
type batch struct {
	m   []matrixark.Mutation
	err error
}

func (b *batch) put(k []byte, v any) {
	if b.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		b.err = fmt.Errorf("memory: encoding %T: %w", v, err)
		return
	}
	b.m = append(b.m, matrixark.Mutation{Key: k, Value: data})
}
