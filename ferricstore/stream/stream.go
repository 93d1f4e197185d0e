package stream

import (
	"errors"
	"sort"
)

// Entry is one stream entry: its ID and its field/value pairs, in the
// order they were added (duplicate fields kept).
type Entry struct {
	ID     ID
	Fields [][]byte
}

// slot is an entry in the stream's array; a deleted one stays until the
// array is compacted, so positions and binary search keep working.
type slot struct {
	id      ID
	fields  [][]byte
	deleted bool
}

// Stream is one stream: its entries in ID order and its consumer groups.
// Every method is deterministic in its arguments (the time included), so
// that replaying a log of resolved calls rebuilds the same stream. It is
// not safe for concurrent use.
type Stream struct {
	slots []slot
	// head is the first slot that may be live; dead counts the deleted
	// slots at or after it.
	head, dead int
	// LastID is the last generated ID, kept when its entry goes.
	LastID ID
	// MaxDeletedID is the largest ID XDEL removed (trimming does not
	// count), for the groups' lag.
	MaxDeletedID ID
	// EntriesAdded counts every entry ever added.
	EntriesAdded uint64
	groups       map[string]*Group
}

// New returns an empty stream.
func New() *Stream { return &Stream{} }

// Errors of adding, with Redis's text.
var (
	// ErrIDTooSmall: an explicit ID not above the stream's last one.
	ErrIDTooSmall = errors.New("ERR The ID specified in XADD is equal or smaller than the target stream top item")
	// ErrIDZero: the ID 0-0.
	ErrIDZero = errors.New("ERR The ID specified in XADD must be greater than 0-0")
	// ErrExhausted: the stream's last ID is MaxID.
	ErrExhausted = errors.New("ERR The stream has exhausted the last possible ID, unable to add more items")
	// ErrSetIDTooSmall: XSETID below the stream's top entry.
	ErrSetIDTooSmall = errors.New("ERR The ID specified in XSETID is smaller than the target stream top item")
	// ErrSetIDAdded: XSETID's ENTRIESADDED below the stream's length.
	ErrSetIDAdded = errors.New("ERR The entries_added specified in XSETID is smaller than the target stream length")
)

// Len is the number of entries.
func (s *Stream) Len() int { return len(s.slots) - s.head - s.dead }

// NextID resolves the ID of an XADD at time nowMs: auto ("*"), or explicit
// id with its sequence chosen when seqAuto ("ms-*"), as Redis does. A
// clock gone back never lowers IDs.
func (s *Stream) NextID(nowMs uint64, auto bool, id ID, seqAuto bool) (ID, error) {
	if s.LastID == MaxID {
		return ID{}, ErrExhausted
	}
	switch {
	case auto:
		if nowMs > s.LastID.Ms {
			return ID{nowMs, 0}, nil
		}
		next, _ := s.LastID.Next()
		return next, nil
	case seqAuto:
		if id.Ms == s.LastID.Ms {
			if s.LastID.Seq == MaxID.Seq {
				return ID{}, ErrIDTooSmall
			}
			id = ID{id.Ms, s.LastID.Seq + 1}
		}
	}
	if id.Compare(s.LastID) <= 0 {
		return ID{}, ErrIDTooSmall
	}
	return id, nil
}

// Add appends an entry under id, which must be above LastID (NextID
// resolves it).
func (s *Stream) Add(id ID, fields [][]byte) error {
	if id.Compare(s.LastID) <= 0 {
		return ErrIDTooSmall
	}
	s.slots = append(s.slots, slot{id: id, fields: fields})
	s.LastID = id
	s.EntriesAdded++
	return nil
}

// find returns the position of the first slot at or after id (live or
// not).
func (s *Stream) find(id ID) int {
	return s.head + sort.Search(len(s.slots)-s.head, func(i int) bool { return !s.slots[s.head+i].id.Less(id) })
}

// Get returns the entry id, if it is in the stream.
func (s *Stream) Get(id ID) (Entry, bool) {
	i := s.find(id)
	if i < len(s.slots) && s.slots[i].id == id && !s.slots[i].deleted {
		return Entry{ID: id, Fields: s.slots[i].fields}, true
	}
	return Entry{}, false
}

// First and Last return the first and last entries; false when empty.
func (s *Stream) First() (Entry, bool) {
	for i := s.head; i < len(s.slots); i++ {
		if !s.slots[i].deleted {
			return Entry{s.slots[i].id, s.slots[i].fields}, true
		}
	}
	return Entry{}, false
}

// Last returns the last entry; false when empty.
func (s *Stream) Last() (Entry, bool) {
	for i := len(s.slots) - 1; i >= s.head; i-- {
		if !s.slots[i].deleted {
			return Entry{s.slots[i].id, s.slots[i].fields}, true
		}
	}
	return Entry{}, false
}

// Range returns up to count entries (count ≤ 0: all) with IDs in
// [start, end], ascending, or descending from end when rev.
func (s *Stream) Range(start, end ID, count int, rev bool) []Entry {
	var out []Entry
	if end.Less(start) {
		return out
	}
	if !rev {
		for i := s.find(start); i < len(s.slots) && !end.Less(s.slots[i].id); i++ {
			if sl := &s.slots[i]; !sl.deleted {
				out = append(out, Entry{sl.id, sl.fields})
				if count > 0 && len(out) == count {
					break
				}
			}
		}
		return out
	}
	i := s.find(end)
	if i == len(s.slots) || end.Less(s.slots[i].id) {
		i--
	}
	for ; i >= s.head && !s.slots[i].id.Less(start); i-- {
		if sl := &s.slots[i]; !sl.deleted {
			out = append(out, Entry{sl.id, sl.fields})
			if count > 0 && len(out) == count {
				break
			}
		}
	}
	return out
}

// Each calls fn with every entry, ascending, without gathering them
// (a snapshot walks millions); fn must not change the stream.
func (s *Stream) Each(fn func(e Entry)) {
	for i := s.head; i < len(s.slots); i++ {
		if sl := &s.slots[i]; !sl.deleted {
			fn(Entry{sl.id, sl.fields})
		}
	}
}

// After returns up to count entries (count ≤ 0: all) with IDs above id.
func (s *Stream) After(id ID, count int) []Entry {
	next, ok := id.Next()
	if !ok {
		return nil
	}
	return s.Range(next, MaxID, count, false)
}

// Delete removes the entries ids (XDEL) and returns how many it removed.
// Each removed ID raises MaxDeletedID.
func (s *Stream) Delete(ids []ID) int {
	n := 0
	for _, id := range ids {
		i := s.find(id)
		if i < len(s.slots) && s.slots[i].id == id && !s.slots[i].deleted {
			s.slots[i].deleted, s.slots[i].fields = true, nil
			s.dead++
			n++
			if s.MaxDeletedID.Less(id) {
				s.MaxDeletedID = id
			}
		}
	}
	s.settle()
	return n
}

// settle drops the deleted slots at the head, and compacts the array
// when most of it is dead.
func (s *Stream) settle() {
	for s.head < len(s.slots) && s.slots[s.head].deleted {
		s.slots[s.head] = slot{}
		s.head++
		s.dead--
	}
	live := len(s.slots) - s.head - s.dead
	if s.head+s.dead > 64 && s.head+s.dead > live {
		out := make([]slot, 0, live+live/4)
		for _, sl := range s.slots[s.head:] {
			if !sl.deleted {
				out = append(out, sl)
			}
		}
		s.slots, s.head, s.dead = out, 0, 0
	}
}

// Trim strategies.
const (
	// TrimMaxLen keeps the newest Threshold entries (MAXLEN).
	TrimMaxLen = iota + 1
	// TrimMinID removes the entries below MinID (MINID).
	TrimMinID
)

// Trim is XTRIM's and XADD's trimming.
type Trim struct {
	// Strategy is TrimMaxLen or TrimMinID (0: no trimming).
	Strategy int
	MaxLen   int64
	MinID    ID
	// Approx ("~") removes only whole nodes of NodeSize entries, so may
	// keep more than asked; Limit (with Approx) bounds the entries one
	// call removes (0: no bound).
	Approx bool
	Limit  int64
}

// NodeSize is how many entries a node holds, for approximate trimming:
// Redis's stream-node-max-entries default.
const NodeSize = 100

// DefaultApproxLimit is the removal bound of an approximate trim given
// no LIMIT: Redis's 100 × stream-node-max-entries.
const DefaultApproxLimit = 100 * NodeSize

// Trim removes entries from the head as t says and returns how many.
// Exact trimming removes exactly down to the bound; approximate trimming
// goes node by node (NodeSize live entries, from the head) and stops at
// the first node it would have to split. The stream's last ID and counts
// stay; trimming does not raise MaxDeletedID.
func (s *Stream) Trim(t Trim) int64 {
	if t.Strategy == 0 {
		return 0
	}
	var removed int64
	for s.Len() > 0 {
		// The next node: NodeSize live entries from the head.
		n, last := 0, s.head
		for i := s.head; i < len(s.slots) && n < NodeSize; i++ {
			if !s.slots[i].deleted {
				n++
				last = i
			}
		}
		whole := false
		switch t.Strategy {
		case TrimMaxLen:
			whole = int64(s.Len()-n) >= t.MaxLen
		case TrimMinID:
			whole = s.slots[last].id.Less(t.MinID)
		}
		if t.Approx && t.Limit > 0 && removed+int64(n) > t.Limit {
			break
		}
		if whole {
			s.dropHead(last + 1)
			removed += int64(n)
			continue
		}
		if t.Approx {
			break
		}
		// Exact: the rest comes out of this node, entry by entry.
		for s.Len() > 0 {
			first := s.head
			if t.Strategy == TrimMaxLen && int64(s.Len()) <= t.MaxLen ||
				t.Strategy == TrimMinID && !s.slots[first].id.Less(t.MinID) {
				break
			}
			s.dropHead(first + 1)
			removed++
		}
		break
	}
	return removed
}

// dropHead removes every slot before position end.
func (s *Stream) dropHead(end int) {
	for i := s.head; i < end; i++ {
		if s.slots[i].deleted {
			s.dead--
		}
		s.slots[i] = slot{}
	}
	s.head = end
	s.settle()
}

// SetID sets the last ID (XSETID), EntriesAdded unless added is
// negative, and MaxDeletedID unless maxDeleted is 0-0, with redis-server
// 7.0's checks in its order (an ID below MaxDeletedID is taken, as 7.0
// takes it).
func (s *Stream) SetID(id ID, added int64, maxDeleted ID) error {
	if err := s.CheckSetID(id, added); err != nil {
		return err
	}
	s.LastID = id
	if added >= 0 {
		s.EntriesAdded = uint64(added)
	}
	if !maxDeleted.IsZero() {
		s.MaxDeletedID = maxDeleted
	}
	return nil
}

// CheckSetID returns the error SetID would return, changing nothing.
func (s *Stream) CheckSetID(id ID, added int64) error {
	if s.Len() > 0 {
		if last, _ := s.Last(); id.Less(last.ID) {
			return ErrSetIDTooSmall
		}
		if added >= 0 && uint64(s.Len()) > uint64(added) {
			return ErrSetIDAdded
		}
	}
	return nil
}
