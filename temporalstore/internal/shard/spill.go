package shard

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
)

// Spilling keeps the collections' memory within a budget. Strings already
// live in the log; a collection lives in memory until its shard's budget
// is exceeded, when the collections the CLOCK hand finds untouched since
// its last pass are spilled: each one's image is logged as an OpImage
// record (the log is the value store, read through the record cache) and
// its index entry points at that record, as a string's does. A read
// decodes the image (and makes the collection resident again when the
// budget has room); a write makes it resident, then applies.
//
// Spilling changes where state is held, never what it is: the image is
// taken with the append gate held exclusively, so it is the collection as
// of its record's place in the log, and replay applies it as such. Making
// a spilled collection resident writes nothing.

// Spill limits.
const (
	// spillRecordBytes bounds the images one spill record carries, so a
	// spill holds the append gate for one bounded write at a time.
	spillRecordBytes = 1 << 20
	// maxSpillImage is the largest image spilled: one record must hold it
	// (the log's limit is 16 MiB). A larger collection stays resident.
	maxSpillImage = 8 << 20
	// spillRetry is how long a shard whose spill freed less than asked
	// waits before a write tries again (unless the budget's use grows by
	// a sixteenth first), so writes do not each sweep a shard with nothing
	// left to spill.
	spillRetry = 50 * time.Millisecond
)

// errSpilledRecord marks an OpImage record that does not decode.
var errSpilledRecord = errors.New("malformed spilled collection")

// Budget is the memory that resident collections may take, shared by the
// shards that count against it. Sizes are Object.Size's estimates.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Limit is the budget's size.
func (b *Budget) Limit() int64 { return b.limit }

// Used is the resident collections' memory now.
func (b *Budget) Used() int64 { return b.used.Load() }

// spillState is a shard's spilling state.
type spillState struct {
	// bytes is the resident collections' Size and spilled the index
	// entries of spilled ones, both under the shard's mu.
	bytes   int64
	spilled int
	// mu serializes spills; cursor (the CLOCK hand over objs), retryAt
	// and retryAbove are under it.
	mu      sync.Mutex
	cursor  int
	retryAt time.Time
	// retryAbove is the budget's use at which a write tries again before
	// retryAt: however fast writes come, the budget is not overrun by more
	// than a sixteenth between tries.
	retryAbove int64
	// spills counts collections spilled, loads those made resident by a
	// write and promotions those made resident by a read.
	spills, loads, promotions atomic.Uint64
}

// recount counts o's memory as it is now against the collections' budget,
// in place of what was counted for it before.
func (s *Shard) recount(o *object.Object) {
	n := o.Size()
	s.objDelta(n - o.Accounted)
	o.Accounted = n
}

// objDelta adds d to the resident collections' memory.
func (s *Shard) objDelta(d int64) {
	s.spill.bytes += d
	if b := s.opts.Collections; b != nil {
		b.used.Add(d)
	}
}

// imageCommand is the OpImage record of o.
func imageCommand(o *object.Object, img []byte) command.Command {
	return command.Command{Op: OpImage, Key: o.Key, Expiry: o.Expiry, Args: [][]byte{img, Uvarint(o.Ver)}}
}

// decodeSpilled decodes the collection of an OpImage command.
func decodeSpilled(c *command.Decoded) (*object.Object, error) {
	if c.Op != OpImage || len(c.Args) != 2 {
		return nil, errSpilledRecord
	}
	o, rest, err := object.Decode(c.Args[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSpilledRecord, err)
	}
	ver, n := binary.Uvarint(c.Args[1])
	if len(rest) != 0 || n <= 0 {
		return nil, errSpilledRecord
	}
	o.Ver = ver
	return o, nil
}

// residentLocked returns key's index entry, first making a spilled
// collection resident. A spilled record that cannot be read or decoded is
// left as it is (an entry that is not an object's): the op then does not
// apply, as for any damaged record.
func (s *Shard) residentLocked(key []byte) (keyindex.Entry, bool) {
	m := &keyMatch{s: s, key: key}
	e, ok := s.index.Get(hashKey(key), m.match)
	if !ok || !isSpilled(e) {
		return e, ok
	}
	o, err := decodeSpilled(&m.cmd)
	if err != nil {
		return e, true
	}
	ne := keyindex.Entry{Addr: s.allocObject(o), Meta: metaObject | e.Meta&metaTTL}
	s.putLocked(key, ne)
	s.spill.loads.Add(1)
	return ne, true
}

// promote makes the spilled collections a read decoded resident, while
// the budget has room for them: a collection read again is then served
// from memory. It writes nothing.
func (s *Shard) promote(items []Item) {
	b := s.opts.Collections
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, it := range items {
		if b != nil && b.used.Load()+it.Obj.Size() > b.limit {
			continue
		}
		key := it.Obj.Key
		e, ok := s.index.Get(hashKey(key), s.matcher(key))
		if !ok || e != it.spilled {
			continue // written, or already promoted, since the read
		}
		s.putLocked(key, keyindex.Entry{Addr: s.allocObject(it.Obj), Meta: metaObject | e.Meta&metaTTL})
		s.spill.promotions.Add(1)
	}
}

// SpillStats is what a Spill did.
type SpillStats struct {
	// Spilled is the number of collections spilled, Expired the expired
	// ones deleted instead, and Freed their memory.
	Spilled, Expired int
	Freed            int64
}

// Spill moves resident collections to the log until at least want bytes
// of their memory are freed, or none is left that the CLOCK hand may take
// (each collection touched since the hand last passed gets a second
// chance; one too large for a record stays). Each batch is one logged
// record, so a crash at any point loses nothing.
func (s *Shard) Spill(ctx context.Context, want int64) (SpillStats, error) {
	s.spill.mu.Lock()
	defer s.spill.mu.Unlock()
	return s.spillLocked(ctx, want)
}

func (s *Shard) spillLocked(ctx context.Context, want int64) (SpillStats, error) {
	var st SpillStats
	for st.Freed < want {
		var batch SpillStats
		err := s.mutate(ctx, func(v *View) ([]command.Command, error) {
			var cmds []command.Command
			recBytes, steps, n := 0, 0, len(s.objs)
			for ; steps < 2*n && st.Freed+batch.Freed < want && recBytes < spillRecordBytes; steps++ {
				i := s.spill.cursor % n
				s.spill.cursor = i + 1
				o := s.objs[i]
				if o == nil || o.Touched.Swap(false) {
					continue
				}
				if o.Expired(v.now) {
					cmds = append(cmds, command.Command{Op: OpDelete, Key: o.Key})
					batch.Expired++
				} else {
					img := object.Append(nil, o)
					if len(img) > maxSpillImage {
						continue
					}
					cmds = append(cmds, imageCommand(o, img))
					recBytes += len(img)
					batch.Spilled++
				}
				batch.Freed += o.Accounted
			}
			return cmds, nil
		})
		if err != nil {
			return st, err
		}
		st.Spilled += batch.Spilled
		st.Expired += batch.Expired
		st.Freed += batch.Freed
		s.spill.spills.Add(uint64(batch.Spilled))
		if batch.Spilled+batch.Expired == 0 {
			break
		}
	}
	return st, nil
}

// spillIfOver spills from this shard when its budget is exceeded, by the
// excess and a sixteenth of the budget more, so that writes near the
// limit do not each spill. One spill runs at a time; writes meanwhile go
// on without waiting for it.
func (s *Shard) spillIfOver(ctx context.Context) {
	b := s.opts.Collections
	if b == nil || b.used.Load() <= b.limit || !s.spill.mu.TryLock() {
		return
	}
	defer s.spill.mu.Unlock()
	used := b.used.Load()
	over := used - b.limit
	if over <= 0 || used < s.spill.retryAbove && time.Now().Before(s.spill.retryAt) {
		return
	}
	want := over + b.limit/16
	st, err := s.spillLocked(ctx, want)
	if err != nil || st.Freed < want {
		s.spill.retryAt = time.Now().Add(spillRetry)
		s.spill.retryAbove = b.used.Load() + b.limit/16
	}
}

// CopyImage is a command that puts a copy of o, whatever its kind, at
// key: its image, as a spill logs it, so the key reads as the collection
// (resident again at its first write). The engine copies series and
// control states between tables with it, which have no ops that rebuild
// them whole.
func CopyImage(key []byte, o *object.Object) (command.Command, error) {
	c, err := o.Clone()
	if err != nil {
		return command.Command{}, err
	}
	c.Key = append([]byte(nil), key...)
	return imageCommand(c, object.Append(nil, c)), nil
}
