package ferricstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// Streams is a Store's streams, with Redis's stream commands as methods.
// Every write is logged (and, unless Options.Async, fsynced) before it
// returns; reads see only what is durable.
type Streams struct{ st *Store }

// Errors of the streams API, with Redis's text where a command has one.
var (
	// ErrInvalid: an argument the command cannot take.
	ErrInvalid = errors.New("ERR invalid argument")
	// ErrNoSuchKey: the stream does not exist (XSETID, XINFO STREAM).
	ErrNoSuchKey = errors.New("ERR no such key")
	// ErrGroupNeedsKey: XGROUP on a missing stream without MKSTREAM.
	//lint:ignore ST1005 Redis's text, which clients match
	ErrGroupNeedsKey = errors.New("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
)

// AddArgs are XADD's arguments.
type AddArgs struct {
	// ID is "*" or "" for an automatic ID, "ms-*" for an automatic
	// sequence, or an explicit ID.
	ID string
	// NoMkStream adds nothing when the stream does not exist.
	NoMkStream bool
	// Trim trims the stream after the entry is added.
	Trim stream.Trim
	// Fields are the entry's field/value pairs: an even number, at least
	// two.
	Fields [][]byte
	// Trimmed, when set, receives how many entries Trim removed.
	Trimmed *int64
}

// Add adds an entry (XADD) and returns its ID; false (and no error) when
// NoMkStream found no stream.
func (x *Streams) Add(ctx context.Context, key string, a AddArgs) (stream.ID, bool, error) {
	p, err := x.AddAsync(ctx, key, a)
	if err != nil {
		return stream.ID{}, false, err
	}
	return p.Wait()
}

// PendingAdd is an XADD queued by AddAsync.
type PendingAdd struct {
	r       *request
	trimmed *int64
}

// AddAsync queues an Add and returns at once: the adds queued before any
// of them is waited for share a batch and its fsync (a pipeline of
// XADDs). Wait returns what Add would.
func (x *Streams) AddAsync(ctx context.Context, key string, a AddArgs) (PendingAdd, error) {
	if len(a.Fields) == 0 || len(a.Fields)%2 != 0 {
		return PendingAdd{}, fmt.Errorf("%w: an entry needs field/value pairs", ErrInvalid)
	}
	auto := a.ID == "" || a.ID == "*"
	var id stream.ID
	var seqAuto bool
	if !auto {
		var err error
		if id, seqAuto, err = stream.ParseAddID(a.ID); err != nil {
			return PendingAdd{}, err
		}
		if id.IsZero() && !seqAuto {
			return PendingAdd{}, stream.ErrIDZero
		}
	}
	// One allocation for the fields, which the stream keeps.
	n := 0
	for _, f := range a.Fields {
		n += len(f)
	}
	buf := make([]byte, 0, n)
	fields := make([][]byte, len(a.Fields))
	for i, f := range a.Fields {
		buf = append(buf, f...)
		fields[i] = buf[len(buf)-len(f) : len(buf) : len(buf)]
	}
	r, err := x.st.shardOf(key).submit(ctx, func(st map[string]*stream.Stream) (op, any, error) {
		s := st[key]
		if s == nil {
			if a.NoMkStream {
				return op{}, nil, nil
			}
			s = stream.New()
		}
		nid, err := s.NextID(uint64(max(x.st.now(), 0)), auto, id, seqAuto)
		if err != nil {
			return op{}, nil, err
		}
		o := op{code: opAdd, key: key, id: nid, fields: fields}
		o.setTrim(a.Trim)
		return o, nil, nil
	})
	if err != nil {
		return PendingAdd{}, err
	}
	return PendingAdd{r: r, trimmed: a.Trimmed}, nil
}

// Wait waits for the add to be durable and returns its ID; false (and no
// error) when NoMkStream found no stream.
func (p PendingAdd) Wait() (stream.ID, bool, error) {
	res, err := p.r.wait()
	if err != nil || res == nil {
		return stream.ID{}, false, err
	}
	r := res.(added)
	if p.trimmed != nil {
		*p.trimmed = r.trimmed
	}
	return r.id, true, nil
}

// Len is the number of entries (XLEN); 0 for a missing stream.
func (x *Streams) Len(ctx context.Context, key string) (int, error) {
	n := 0
	err := x.View(ctx, key, func(s *stream.Stream) error {
		if s != nil {
			n = s.Len()
		}
		return nil
	})
	return n, err
}

// Range returns up to count entries (count ≤ 0: all) from start to end
// (XRANGE), or from end down to start when rev (XREVRANGE).
func (x *Streams) Range(ctx context.Context, key string, start, end stream.ID, count int, rev bool) ([]stream.Entry, error) {
	var out []stream.Entry
	err := x.View(ctx, key, func(s *stream.Stream) error {
		if s != nil {
			out = s.Range(start, end, count, rev)
		}
		return nil
	})
	return out, err
}

// View runs fn with the stream of key (nil when there is none) under the
// shard's read lock: fn must not change it or keep it.
func (x *Streams) View(ctx context.Context, key string, fn func(s *stream.Stream) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return x.st.shardOf(key).read(func(st map[string]*stream.Stream) error { return fn(st[key]) })
}

// Exists reports whether key holds a stream, an empty one included
// (EXISTS, TYPE).
func (x *Streams) Exists(ctx context.Context, key string) (bool, error) {
	found := false
	err := x.View(ctx, key, func(s *stream.Stream) error {
		found = s != nil
		return nil
	})
	return found, err
}

// Keys calls fn with the key of every stream, a shard at a time under its
// read lock (so fn must not call the store), until fn returns false
// (KEYS, SCAN, DBSIZE).
func (x *Streams) Keys(ctx context.Context, fn func(key string) bool) error {
	for _, sh := range x.st.shards {
		if err := ctx.Err(); err != nil {
			return err
		}
		stop := false
		err := sh.read(func(st map[string]*stream.Stream) error {
			for k := range st {
				if !fn(k) {
					stop = true
					return nil
				}
			}
			return nil
		})
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// Flush deletes every stream (FLUSHALL) and returns how many it deleted.
// Streams added while it runs may survive it, as keys written during a
// FLUSHALL ASYNC do in Redis.
func (x *Streams) Flush(ctx context.Context) (int, error) {
	var keys []string
	if err := x.Keys(ctx, func(k string) bool { keys = append(keys, k); return true }); err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		ok, err := x.DeleteKey(ctx, k)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// Changes returns a channel closed once a change to key's shard is
// durable: a blocked reader takes it, reads, and waits on it if it found
// nothing (taking it first means no change is missed in between).
func (x *Streams) Changes(key string) <-chan struct{} { return x.st.shardOf(key).changes() }

// write queues a change of an existing stream: resolve returns the op
// (code 0: nothing to log) or its result; missing is the result when the
// stream does not exist (nil: ErrNoSuchKey).
func (x *Streams) write(ctx context.Context, key string, missing any, resolve func(s *stream.Stream) (op, any, error)) (any, error) {
	return x.st.shardOf(key).do(ctx, func(st map[string]*stream.Stream) (op, any, error) {
		s := st[key]
		if s == nil {
			if missing == nil {
				return op{}, nil, ErrNoSuchKey
			}
			return op{}, missing, nil
		}
		o, res, err := resolve(s)
		o.key = key
		return o, res, err
	})
}

// Delete removes entries (XDEL) and returns how many it removed.
func (x *Streams) Delete(ctx context.Context, key string, ids []stream.ID) (int, error) {
	res, err := x.write(ctx, key, 0, func(s *stream.Stream) (op, any, error) {
		return op{code: opDelete, ids: ids}, nil, nil
	})
	if err != nil {
		return 0, err
	}
	return res.(int), nil
}

// Trim trims the stream (XTRIM) and returns how many entries it removed.
func (x *Streams) Trim(ctx context.Context, key string, t stream.Trim) (int64, error) {
	if t.Strategy == 0 {
		return 0, fmt.Errorf("%w: no trimming strategy", ErrInvalid)
	}
	res, err := x.write(ctx, key, int64(0), func(s *stream.Stream) (op, any, error) {
		o := op{code: opTrim}
		o.setTrim(t)
		return o, nil, nil
	})
	if err != nil {
		return 0, err
	}
	return res.(int64), nil
}

// DeleteKey removes the stream (DEL) and reports whether it existed.
func (x *Streams) DeleteKey(ctx context.Context, key string) (bool, error) {
	res, err := x.write(ctx, key, false, func(s *stream.Stream) (op, any, error) {
		return op{code: opDeleteKey}, nil, nil
	})
	if err != nil {
		return false, err
	}
	return res.(bool), nil
}

// SetID sets the stream's last ID (XSETID), its entries-added unless
// added is negative and its max deleted ID unless maxDeleted is 0-0.
func (x *Streams) SetID(ctx context.Context, key string, id stream.ID, added int64, maxDeleted stream.ID) error {
	if id.Less(maxDeleted) {
		return errors.New("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
	}
	_, err := x.write(ctx, key, nil, func(s *stream.Stream) (op, any, error) {
		if err := s.CheckSetID(id, added); err != nil {
			return op{}, nil, err
		}
		return op{code: opSetID, id: id, b: added, id2: maxDeleted}, nil, nil
	})
	return err
}

// groupID resolves a group command's ID: "$" is the stream's last ID.
func groupID(s *stream.Stream, text string) (stream.ID, error) {
	if text == "$" {
		if s == nil {
			return stream.ID{}, nil
		}
		return s.LastID, nil
	}
	return stream.ParseStrictID(text)
}

// CreateGroup creates a consumer group delivering after id ("$": the
// stream's last ID) with entriesRead (stream.UnknownEntriesRead when not
// given) (XGROUP CREATE); mkStream creates a missing stream.
func (x *Streams) CreateGroup(ctx context.Context, key, group, id string, mkStream bool, entriesRead int64) error {
	if id != "$" {
		if _, err := stream.ParseStrictID(id); err != nil {
			return err
		}
	}
	_, err := x.st.shardOf(key).do(ctx, func(st map[string]*stream.Stream) (op, any, error) {
		s := st[key]
		if s == nil && !mkStream {
			return op{}, nil, ErrGroupNeedsKey
		}
		if s != nil && s.Group(group) != nil {
			return op{}, nil, stream.ErrGroupExists
		}
		start, err := groupID(s, id)
		if err != nil {
			return op{}, nil, err
		}
		o := op{code: opCreateGroup, key: key, group: group, id: start, a: entriesRead}
		if s == nil {
			o.flags |= flagMkStream
		}
		return o, nil, nil
	})
	return err
}

// groupWrite is write for a change of an existing group.
func (x *Streams) groupWrite(ctx context.Context, key, group string, resolve func(s *stream.Stream, g *stream.Group) (op, any, error)) (any, error) {
	return x.st.shardOf(key).do(ctx, func(st map[string]*stream.Stream) (op, any, error) {
		s := st[key]
		if s == nil {
			return op{}, nil, ErrGroupNeedsKey
		}
		g := s.Group(group)
		if g == nil {
			return op{}, nil, stream.ErrNoGroup
		}
		o, res, err := resolve(s, g)
		o.key, o.group = key, group
		return o, res, err
	})
}

// SetGroupID moves a group's last delivered ID ("$": the stream's last)
// (XGROUP SETID).
func (x *Streams) SetGroupID(ctx context.Context, key, group, id string, entriesRead int64) error {
	_, err := x.groupWrite(ctx, key, group, func(s *stream.Stream, _ *stream.Group) (op, any, error) {
		start, err := groupID(s, id)
		if err != nil {
			return op{}, nil, err
		}
		return op{code: opSetGroupID, id: start, a: entriesRead}, nil, nil
	})
	return err
}

// DestroyGroup removes a group (XGROUP DESTROY) and reports whether it
// existed.
func (x *Streams) DestroyGroup(ctx context.Context, key, group string) (bool, error) {
	res, err := x.st.shardOf(key).do(ctx, func(st map[string]*stream.Stream) (op, any, error) {
		s := st[key]
		if s == nil {
			return op{}, nil, ErrGroupNeedsKey
		}
		if s.Group(group) == nil {
			return op{}, false, nil
		}
		return op{code: opDestroyGroup, key: key, group: group}, nil, nil
	})
	if err != nil {
		return false, err
	}
	return res.(bool), nil
}

// CreateConsumer creates a consumer (XGROUP CREATECONSUMER) and reports
// whether it was new.
func (x *Streams) CreateConsumer(ctx context.Context, key, group, consumer string) (bool, error) {
	res, err := x.groupWrite(ctx, key, group, func(_ *stream.Stream, g *stream.Group) (op, any, error) {
		if g.Consumer(consumer) != nil {
			return op{}, false, nil
		}
		return op{code: opCreateConsumer, consumer: consumer, now: x.st.now()}, nil, nil
	})
	if err != nil {
		return false, err
	}
	return res.(bool), nil
}

// DeleteConsumer removes a consumer and its pending entries (XGROUP
// DELCONSUMER) and returns how many it held.
func (x *Streams) DeleteConsumer(ctx context.Context, key, group, consumer string) (int, error) {
	res, err := x.groupWrite(ctx, key, group, func(_ *stream.Stream, g *stream.Group) (op, any, error) {
		if g.Consumer(consumer) == nil {
			return op{}, 0, nil
		}
		return op{code: opDeleteConsumer, consumer: consumer}, nil, nil
	})
	if err != nil {
		return 0, err
	}
	return res.(int), nil
}

// ReadGroup reads for consumer of group (XREADGROUP on one stream):
// after ">" the entries not yet delivered to the group, up to count
// (count ≤ 0: all), which go into the PEL unless noAck; after an ID the
// consumer's own pending entries past it. The read is logged: it moves
// the group and its PEL.
func (x *Streams) ReadGroup(ctx context.Context, key, group, consumer, after string, count int, noAck bool) ([]stream.Entry, error) {
	var from stream.ID
	if after != ">" {
		var err error
		if from, err = stream.ParseID(after, 0); err != nil {
			return nil, err
		}
	}
	res, err := x.groupWrite(ctx, key, group, func(s *stream.Stream, g *stream.Group) (op, any, error) {
		// A read that would deliver nothing to a known consumer changes
		// nothing worth a record (a blocked reader polls this way).
		if c := g.Consumer(consumer); c != nil {
			if after == ">" && len(s.After(g.LastID, 1)) == 0 {
				return op{}, []stream.Entry{}, nil
			}
			if after != ">" {
				next, ok := from.Next()
				empty := !ok
				if ok {
					empty = true
					g.PendingRange(c, next, stream.MaxID, func(*stream.Pending) bool { empty = false; return false })
				}
				if empty {
					return op{}, []stream.Entry{}, nil
				}
			}
		}
		o := op{consumer: consumer, a: int64(count), now: x.st.now()}
		if after == ">" {
			o.code = opReadNew
			if noAck {
				o.flags |= flagNoAck
			}
		} else {
			o.code, o.id = opReadHistory, from
		}
		return o, nil, nil
	})
	if err != nil {
		return nil, err
	}
	return res.([]stream.Entry), nil
}

// Ack acknowledges entries (XACK) and returns how many were pending; 0
// for a missing stream or group.
func (x *Streams) Ack(ctx context.Context, key, group string, ids []stream.ID) (int, error) {
	res, err := x.write(ctx, key, 0, func(s *stream.Stream) (op, any, error) {
		if s.Group(group) == nil {
			return op{}, 0, nil
		}
		return op{code: opAck, group: group, ids: ids}, nil, nil
	})
	if err != nil {
		return 0, err
	}
	return res.(int), nil
}

// ClaimArgs are XCLAIM's options.
type ClaimArgs struct {
	// MinIdle: only entries idle at least this long (ms).
	MinIdle int64
	// Idle or Time set the new delivery time (now − Idle, or Time in Unix
	// ms); default now.
	Idle, Time *int64
	// RetryCount sets the delivery count.
	RetryCount *int64
	Force      bool
	JustID     bool
	// LastID raises the group's last delivered ID.
	LastID stream.ID
}

// Claim gives consumer the pending entries ids that qualify (XCLAIM).
func (x *Streams) Claim(ctx context.Context, key, group, consumer string, ids []stream.ID, a ClaimArgs) ([]stream.Entry, error) {
	res, err := x.groupWrite(ctx, key, group, func(_ *stream.Stream, _ *stream.Group) (op, any, error) {
		now := x.st.now()
		o := op{code: opClaim, consumer: consumer, ids: ids, a: a.MinIdle, b: -1, c: now, id2: a.LastID, now: now}
		switch {
		case a.Idle != nil:
			o.c = now - *a.Idle
		case a.Time != nil:
			o.c = *a.Time
		}
		// A bogus delivery time (clocks disagree) becomes now, as Redis
		// does, rather than an error.
		if o.c < 0 || o.c > now {
			o.c = now
		}
		if a.RetryCount != nil {
			o.b = *a.RetryCount
		}
		if a.Force {
			o.flags |= flagForce
		}
		if a.JustID {
			o.flags |= flagJustID
		}
		return o, nil, nil
	})
	if err != nil {
		return nil, err
	}
	return res.([]stream.Entry), nil
}

// AutoClaim gives consumer up to count pending entries from start idle
// at least minIdle ms (XAUTOCLAIM).
func (x *Streams) AutoClaim(ctx context.Context, key, group, consumer string, minIdle int64, start stream.ID, count int, justID bool) (AutoClaimed, error) {
	if count <= 0 {
		return AutoClaimed{}, fmt.Errorf("%w: COUNT must be > 0", ErrInvalid)
	}
	res, err := x.groupWrite(ctx, key, group, func(_ *stream.Stream, _ *stream.Group) (op, any, error) {
		o := op{code: opAutoClaim, consumer: consumer, id: start, a: int64(count), b: minIdle, now: x.st.now()}
		if justID {
			o.flags |= flagJustID
		}
		return o, nil, nil
	})
	if err != nil {
		return AutoClaimed{}, err
	}
	return res.(AutoClaimed), nil
}
