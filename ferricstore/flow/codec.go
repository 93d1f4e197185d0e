package flow

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Command kinds in a log record. Stable once assigned: a record outlives
// the binary that wrote it.
const (
	kCreate byte = 1 + iota
	kClaim
	kTransition
	kComplete
	kFail
	kRetry
	kCancel
	kExtend
	kRewind
	kSetPolicy
	kSetSchedule
	kDeleteSchedule
	kBatch
	kTick
	kMax = kTick
)

// codecVersion leads every record and snapshot.
const codecVersion = 1

// ErrMalformed is a record or snapshot that does not decode.
var ErrMalformed = errors.New("flow: malformed record")

// Flags of an encoded command.
const (
	fHasRunAt uint64 = 1 << iota
	fIdempotent
	fHasPriority
	fHasPartition
	fReclaimExpired
	fOnlyExpired
	fHasPayload
	fHasExpected
	fHasStart
	fReplace
	fIndependent
	fFailed
	fDone
)

// AppendRecord appends the log record of c applied at now to dst.
func AppendRecord(dst []byte, now int64, c Command) []byte {
	e := enc{b: append(dst, codecVersion)}
	e.int(now)
	e.command(c)
	return e.b
}

// DecodeRecord reads a log record.
func DecodeRecord(rec []byte) (now int64, c Command, err error) {
	if len(rec) == 0 || rec[0] != codecVersion {
		return 0, nil, fmt.Errorf("%w: version", ErrMalformed)
	}
	d := dec{b: rec[1:]}
	now = d.int()
	c = d.command(0)
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: trailing bytes", ErrMalformed)
	}
	return now, c, d.err
}

type enc struct{ b []byte }

func (e *enc) uint(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) int(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)   { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bytes(p []byte) { e.uint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) flag(on bool, f uint64) uint64 {
	if on {
		return f
	}
	return 0
}

func (e *enc) attrs(as []Attr) {
	e.uint(uint64(len(as)))
	for _, a := range as {
		e.str(a.Key)
		e.str(a.Value)
	}
}

func (e *enc) policy(p Policy) {
	e.uint(uint64(p.Set))
	e.int(p.MaxRetries)
	e.uint(uint64(p.Backoff))
	e.int(p.BaseMs)
	e.int(p.MaxMs)
	e.int(p.JitterPct)
	e.str(p.ExhaustedTo)
	e.uint(uint64(p.Mode))
	e.int(p.MaxActiveMs)
	e.uint(p.Generation)
}

func (e *enc) schedule(s *Schedule) {
	e.str(s.Name)
	e.str(s.Type)
	e.str(s.State)
	e.str(s.Partition)
	e.bytes(s.Payload)
	e.int(s.Priority)
	e.int(s.EveryMs)
	e.int(s.NextDueMs)
	e.uint(uint64(s.Overlap))
	e.uint(s.Fired)
	e.uint(s.Coalesced)
	e.uint(s.Skipped)
	e.str(s.LastTarget)
	e.uint(e.flag(s.Failed, fFailed) | e.flag(s.Done, fDone))
}

func (e *enc) command(c Command) {
	e.b = append(e.b, c.kind())
	switch c := c.(type) {
	case *Create:
		e.uint(e.flag(c.HasRunAt, fHasRunAt) | e.flag(c.Idempotent, fIdempotent))
		e.str(c.ID)
		e.str(c.Type)
		e.str(c.State)
		e.bytes(c.Payload)
		e.int(c.RunAtMs)
		e.int(c.Priority)
		e.str(c.Partition)
		e.str(c.ParentID)
		e.str(c.RootID)
		e.str(c.CorrelationID)
		e.attrs(c.Attributes)
		e.int(c.MaxActiveMs)
	case *Claim:
		e.uint(e.flag(c.HasPriority, fHasPriority) | e.flag(c.HasPartition, fHasPartition) |
			e.flag(c.ReclaimExpired, fReclaimExpired) | e.flag(c.OnlyExpired, fOnlyExpired))
		e.str(c.Type)
		e.str(c.State)
		e.str(c.Worker)
		e.int(c.LeaseMs)
		e.int(int64(c.Limit))
		e.int(c.Priority)
		e.str(c.Partition)
	case *Transition:
		e.uint(e.flag(c.HasRunAt, fHasRunAt) | e.flag(c.HasPriority, fHasPriority) | e.flag(c.HasPayload, fHasPayload))
		e.str(c.ID)
		e.str(c.From)
		e.str(c.To)
		e.str(c.LeaseToken)
		e.uint(c.Fencing)
		e.int(c.RunAtMs)
		e.int(c.Priority)
		e.bytes(c.Payload)
	case *Complete:
		e.str(c.ID)
		e.str(c.LeaseToken)
		e.uint(c.Fencing)
		e.bytes(c.Result)
	case *Fail:
		e.str(c.ID)
		e.str(c.LeaseToken)
		e.uint(c.Fencing)
		e.bytes(c.Error)
	case *Retry:
		e.uint(e.flag(c.HasRunAt, fHasRunAt))
		e.str(c.ID)
		e.str(c.LeaseToken)
		e.uint(c.Fencing)
		e.bytes(c.Error)
		e.int(c.RunAtMs)
		e.policy(c.Override)
	case *Cancel:
		e.str(c.ID)
		e.str(c.LeaseToken)
		e.uint(c.Fencing)
		e.bytes(c.Reason)
	case *ExtendLease:
		e.str(c.ID)
		e.str(c.LeaseToken)
		e.uint(c.Fencing)
		e.int(c.LeaseMs)
	case *Rewind:
		e.str(c.ID)
		e.str(c.To)
	case *SetPolicy:
		e.uint(e.flag(c.HasExpected, fHasExpected))
		e.str(c.Type)
		e.str(c.State)
		e.policy(c.Policy)
		e.uint(c.ExpectedGeneration)
	case *SetSchedule:
		e.uint(e.flag(c.HasStart, fHasStart) | e.flag(c.Replace, fReplace))
		e.schedule(&c.Schedule)
		e.int(c.StartMs)
	case *DeleteSchedule:
		e.str(c.Name)
	case *Batch:
		e.uint(e.flag(c.Independent, fIndependent))
		e.uint(uint64(len(c.Commands)))
		for _, sub := range c.Commands {
			e.command(sub)
		}
	case *Tick:
		e.int(c.PurgeBeforeMs)
		if c.MaxDone > 0 {
			// Last in its record (a Tick is never batched), and left out
			// at zero, as records before it had none.
			e.int(int64(c.MaxDone))
		}
	}
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, what)
	}
	d.b = nil
}

func (d *dec) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) raw() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) str() string { return string(d.raw()) }

func (d *dec) bytes() []byte {
	p := d.raw()
	if len(p) == 0 {
		return nil
	}
	return append([]byte(nil), p...)
}

func (d *dec) byte() byte {
	if len(d.b) == 0 {
		d.fail("byte")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// count reads a list's length, refusing one longer than the bytes left
// could hold (min bytes an element).
func (d *dec) count(minBytes int) int {
	n := d.uint()
	if n > uint64(len(d.b)/max(minBytes, 1)) {
		d.fail("count")
		return 0
	}
	return int(n)
}

func (d *dec) attrs() []Attr {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	as := make([]Attr, n)
	for i := range as {
		as[i] = Attr{d.str(), d.str()}
	}
	return as
}

func (d *dec) policy() Policy {
	var p Policy
	p.Set = uint16(d.uint())
	p.MaxRetries = d.int()
	p.Backoff = Backoff(d.uint())
	p.BaseMs = d.int()
	p.MaxMs = d.int()
	p.JitterPct = d.int()
	p.ExhaustedTo = d.str()
	p.Mode = Mode(d.uint())
	p.MaxActiveMs = d.int()
	p.Generation = d.uint()
	return p
}

func (d *dec) schedule() Schedule {
	var s Schedule
	s.Name, s.Type, s.State, s.Partition = d.str(), d.str(), d.str(), d.str()
	s.Payload = d.bytes()
	s.Priority, s.EveryMs, s.NextDueMs = d.int(), d.int(), d.int()
	s.Overlap = Overlap(d.uint())
	s.Fired, s.Coalesced, s.Skipped = d.uint(), d.uint(), d.uint()
	s.LastTarget = d.str()
	f := d.uint()
	s.Failed, s.Done = f&fFailed != 0, f&fDone != 0
	return s
}

// command reads one command; depth bounds nested batches.
func (d *dec) command(depth int) Command {
	k := d.byte()
	if d.err != nil {
		return nil
	}
	switch k {
	case kCreate:
		f := d.uint()
		c := &Create{HasRunAt: f&fHasRunAt != 0, Idempotent: f&fIdempotent != 0}
		c.ID, c.Type, c.State = d.str(), d.str(), d.str()
		c.Payload = d.bytes()
		c.RunAtMs, c.Priority = d.int(), d.int()
		c.Partition, c.ParentID, c.RootID, c.CorrelationID = d.str(), d.str(), d.str(), d.str()
		c.Attributes = d.attrs()
		c.MaxActiveMs = d.int()
		return c
	case kClaim:
		f := d.uint()
		c := &Claim{HasPriority: f&fHasPriority != 0, HasPartition: f&fHasPartition != 0,
			ReclaimExpired: f&fReclaimExpired != 0, OnlyExpired: f&fOnlyExpired != 0}
		c.Type, c.State, c.Worker = d.str(), d.str(), d.str()
		c.LeaseMs = d.int()
		limit := d.int()
		if limit < 0 || limit > math.MaxInt32 {
			d.fail("limit")
		}
		c.Limit = int(limit)
		c.Priority = d.int()
		c.Partition = d.str()
		return c
	case kTransition:
		f := d.uint()
		c := &Transition{HasRunAt: f&fHasRunAt != 0, HasPriority: f&fHasPriority != 0, HasPayload: f&fHasPayload != 0}
		c.ID, c.From, c.To, c.LeaseToken = d.str(), d.str(), d.str(), d.str()
		c.Fencing = d.uint()
		c.RunAtMs, c.Priority = d.int(), d.int()
		c.Payload = d.bytes()
		return c
	case kComplete:
		c := &Complete{ID: d.str(), LeaseToken: d.str()}
		c.Fencing, c.Result = d.uint(), d.bytes()
		return c
	case kFail:
		c := &Fail{ID: d.str(), LeaseToken: d.str()}
		c.Fencing, c.Error = d.uint(), d.bytes()
		return c
	case kRetry:
		f := d.uint()
		c := &Retry{HasRunAt: f&fHasRunAt != 0}
		c.ID, c.LeaseToken = d.str(), d.str()
		c.Fencing, c.Error = d.uint(), d.bytes()
		c.RunAtMs = d.int()
		c.Override = d.policy()
		return c
	case kCancel:
		c := &Cancel{ID: d.str(), LeaseToken: d.str()}
		c.Fencing, c.Reason = d.uint(), d.bytes()
		return c
	case kExtend:
		c := &ExtendLease{ID: d.str(), LeaseToken: d.str()}
		c.Fencing, c.LeaseMs = d.uint(), d.int()
		return c
	case kRewind:
		return &Rewind{ID: d.str(), To: d.str()}
	case kSetPolicy:
		f := d.uint()
		c := &SetPolicy{HasExpected: f&fHasExpected != 0, Type: d.str(), State: d.str()}
		c.Policy = d.policy()
		c.ExpectedGeneration = d.uint()
		return c
	case kSetSchedule:
		f := d.uint()
		c := &SetSchedule{HasStart: f&fHasStart != 0, Replace: f&fReplace != 0}
		c.Schedule = d.schedule()
		c.StartMs = d.int()
		return c
	case kDeleteSchedule:
		return &DeleteSchedule{Name: d.str()}
	case kBatch:
		if depth > 0 {
			d.fail("nested batch")
			return nil
		}
		f := d.uint()
		n := d.count(2)
		c := &Batch{Independent: f&fIndependent != 0, Commands: make([]Command, 0, n)}
		for range n {
			sub := d.command(depth + 1)
			if d.err != nil {
				return nil
			}
			c.Commands = append(c.Commands, sub)
		}
		return c
	case kTick:
		c := &Tick{PurgeBeforeMs: d.int()}
		if len(d.b) > 0 && depth == 0 {
			n := d.int()
			if n <= 0 || n > math.MaxInt32 {
				d.fail("max done")
			}
			c.MaxDone = int(n)
		}
		return c
	}
	d.fail("command kind")
	return nil
}

// Snapshot encodes the whole table.
func (t *Table) Snapshot() []byte {
	e := enc{b: []byte{codecVersion}}
	e.uint(t.seq)
	ids := sortedKeys(t.flows)
	e.uint(uint64(len(ids)))
	for _, id := range ids {
		r := t.flows[id]
		e.str(r.ID)
		e.str(r.Type)
		e.str(r.State)
		e.str(r.Partition)
		e.bytes(r.Payload)
		e.bytes(r.Result)
		e.bytes(r.Error)
		e.uint(r.Version)
		e.int(r.Attempts)
		e.int(r.Priority)
		e.int(r.CreatedMs)
		e.int(r.UpdatedMs)
		e.int(r.NextRunAtMs)
		e.str(r.LeaseOwner)
		e.str(r.LeaseToken)
		e.int(r.LeaseDeadlineMs)
		e.uint(r.Fencing)
		e.str(r.RunState)
		e.str(r.ParentID)
		e.str(r.RootID)
		e.str(r.CorrelationID)
		e.attrs(r.Attributes)
		e.int(r.MaxActiveMs)
		e.uint(r.seq)
		e.uint(uint64(len(r.history)))
		for _, ev := range r.history {
			e.str(ev.Kind)
			e.str(ev.From)
			e.str(ev.To)
			e.str(ev.Worker)
			e.uint(ev.Fencing)
			e.int(ev.Ms)
			e.uint(ev.Version)
			e.str(ev.Detail)
		}
	}
	ks := make([]qkey, 0, len(t.policies))
	for k := range t.policies {
		ks = append(ks, k)
	}
	sortQkeys(ks)
	e.uint(uint64(len(ks)))
	for _, k := range ks {
		e.str(k.typ)
		e.str(k.state)
		e.policy(*t.policies[k])
	}
	names := sortedKeys(t.schedules)
	e.uint(uint64(len(names)))
	for _, n := range names {
		e.schedule(t.schedules[n])
	}
	return e.b
}

// LoadSnapshot decodes a table Snapshot encoded.
func LoadSnapshot(b []byte) (*Table, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, fmt.Errorf("%w: snapshot version", ErrMalformed)
	}
	d := dec{b: b[1:]}
	t := NewTable()
	t.seq = d.uint()
	n := d.count(20)
	for range n {
		r := &Record{}
		r.ID, r.Type, r.State, r.Partition = d.str(), d.str(), d.str(), d.str()
		r.Payload, r.Result, r.Error = d.bytes(), d.bytes(), d.bytes()
		r.Version = d.uint()
		r.Attempts, r.Priority, r.CreatedMs, r.UpdatedMs, r.NextRunAtMs = d.int(), d.int(), d.int(), d.int(), d.int()
		r.LeaseOwner, r.LeaseToken = d.str(), d.str()
		r.LeaseDeadlineMs = d.int()
		r.Fencing = d.uint()
		r.RunState, r.ParentID, r.RootID, r.CorrelationID = d.str(), d.str(), d.str(), d.str()
		r.Attributes = d.attrs()
		r.MaxActiveMs = d.int()
		r.seq = d.uint()
		h := d.count(8)
		if h > 0 {
			r.history = make([]Event, h)
		}
		for i := range h {
			ev := &r.history[i]
			ev.Kind, ev.From, ev.To, ev.Worker = d.str(), d.str(), d.str(), d.str()
			ev.Fencing, ev.Ms, ev.Version = d.uint(), d.int(), d.uint()
			ev.Detail = d.str()
		}
		if d.err != nil {
			return nil, d.err
		}
		if r.ID == "" || t.flows[r.ID] != nil {
			return nil, fmt.Errorf("%w: flow id", ErrMalformed)
		}
		t.flows[r.ID] = r
		t.index(r)
	}
	np := d.count(4)
	for range np {
		k := qkey{d.str(), d.str()}
		p := d.policy()
		t.policies[k] = &p
	}
	ns := d.count(8)
	for range ns {
		s := d.schedule()
		if d.err != nil {
			return nil, d.err
		}
		t.schedules[s.Name] = &s
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: trailing bytes", ErrMalformed)
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

func sortQkeys(ks []qkey) {
	slices.SortFunc(ks, func(a, b qkey) int {
		return cmp.Or(cmp.Compare(a.typ, b.typ), cmp.Compare(a.state, b.state))
	})
}
