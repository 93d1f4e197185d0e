package policy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// entry is the fuzz model's view of a resident key.
type entry struct {
	cost int64
	pins int
}

// FuzzPolicy runs a random sequence of Access, Admit, Remove, Pin, Unpin and
// SetCapacity against every policy and checks them against a model: the
// cost never exceeds the capacity after a successful Admit, pinned entries
// are never victims, victims were resident, and Len and Cost match.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte{2, 1, 3, 2, 2, 3, 4, 1, 0, 2, 5, 7, 6, 1, 1, 5, 1, 0})
	f.Add([]byte{2, 1, 1, 2, 2, 1, 2, 3, 1, 4, 1, 0, 4, 2, 0, 6, 0, 0, 5, 1, 0, 6, 1, 0})
	f.Add([]byte{2, 9, 7, 2, 10, 7, 0, 9, 0, 0, 9, 0, 2, 11, 7, 3, 9, 0, 2, 12, 0})
	// Evictions, then keys coming back: ARC's ghost lists.
	f.Add([]byte{2, 0, 4, 2, 1, 4, 2, 2, 4, 0, 1, 0, 2, 3, 4, 2, 4, 4, 2, 0, 4, 2, 2, 4, 3, 1, 0, 4, 3, 0, 6, 2, 0, 5, 3, 0, 2, 5, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		for _, c := range constructors {
			runOps(t, c.new(16), ops)
		}
		runOps(t, NewSLRU(16, SLRUOptions{Segments: 4}), ops)
	})
}

// maxFuzzOps bounds the operations per input, so the fuzzer spends its time
// on many short sequences rather than a few long ones.
const maxFuzzOps = 256

func runOps(t *testing.T, p Policy, ops []byte) {
	if len(ops) > 3*maxFuzzOps {
		ops = ops[:3*maxFuzzOps]
	}
	model := map[uint64]*entry{}
	var victims []uint64
	for len(ops) >= 3 {
		op, key, arg := ops[0]%7, uint64(ops[1]%16), int64(ops[2]%9)
		ops = ops[3:]
		switch op {
		case 0, 1:
			if _, ok := model[key]; ok != p.Access(key) {
				t.Fatalf("Access(%d) disagrees with the model (resident %v)", key, ok)
			}
		case 2:
			costBefore, lenBefore := p.Cost(), p.Len()
			var err error
			victims, err = p.Admit(key, arg, victims[:0])
			switch {
			case errors.Is(err, ErrInvalidCost), errors.Is(err, ErrTooLarge), errors.Is(err, ErrNoRoom):
				require.Empty(t, victims)
				require.Equal(t, costBefore, p.Cost())
				require.Equal(t, lenBefore, p.Len())
			case err == nil:
				if s, ok := p.(*SLRU); ok && s.NumSegments() > 1 {
					seg := s.SegmentFor(key)
					require.LessOrEqual(t, s.SegmentCost(seg), s.SegmentCapacity(seg))
				} else {
					require.LessOrEqual(t, p.Cost(), p.Capacity())
				}
				if e, ok := model[key]; ok {
					e.cost = arg
				} else {
					model[key] = &entry{cost: arg}
				}
			default:
				require.ErrorIs(t, err, ErrRejected)
				e, ok := model[key]
				require.False(t, ok && e.pins > 0, "a pinned key was rejected")
				delete(model, key)
			}
			for _, v := range victims {
				require.NotEqual(t, key, v)
				e, ok := model[v]
				require.True(t, ok, "victim %d was not resident", v)
				require.Zero(t, e.pins, "pinned key %d evicted", v)
				delete(model, v)
			}
		case 3:
			_, ok := model[key]
			require.Equal(t, ok, p.Remove(key))
			delete(model, key)
		case 4:
			e, ok := model[key]
			require.Equal(t, ok, p.Pin(key))
			if ok {
				e.pins++
			}
		case 5:
			e, ok := model[key]
			pinned := ok && e.pins > 0
			require.Equal(t, pinned, p.Unpin(key))
			if pinned {
				e.pins--
			}
		case 6:
			var err error
			victims, err = p.SetCapacity(arg*4, victims[:0])
			for _, v := range victims {
				e, ok := model[v]
				require.True(t, ok, "victim %d was not resident", v)
				require.Zero(t, e.pins, "pinned key %d evicted", v)
				delete(model, v)
			}
			if err == nil {
				require.LessOrEqual(t, p.Cost(), p.Capacity())
			} else {
				require.ErrorIs(t, err, ErrNoRoom)
				if s, ok := p.(*SLRU); ok && s.NumSegments() > 1 {
					// Only the segments still over budget are all pinned.
					for i := range s.segs {
						seg := &s.segs[i]
						if seg.t.total > seg.capacity {
							require.Equal(t, seg.t.total, seg.t.pinned, "segment %d over budget with unpinned entries", i)
						}
					}
					break
				}
				for _, e := range model {
					require.NotZero(t, e.pins, "an unpinned entry survived ErrNoRoom")
				}
			}
		}
		checkModel(t, p, model)
		checkStructure(t, p)
	}
}

// checkModel compares the policy with the model. It uses plain comparisons:
// it runs after every operation, and testify's reflection would dominate the
// fuzzer's time.
func checkModel(t *testing.T, p Policy, model map[uint64]*entry) {
	t.Helper()
	var cost int64
	for k, e := range model {
		if !p.Contains(k) {
			t.Fatalf("key %d missing", k)
		}
		cost += e.cost
	}
	if p.Len() != len(model) || p.Cost() != cost {
		t.Fatalf("Len %d, Cost %d; model has %d entries costing %d", p.Len(), p.Cost(), len(model), cost)
	}
}

// checkStructure walks the lists and checks each policy's accounting.
func checkStructure(t *testing.T, p Policy) {
	t.Helper()
	walk := func(tb *table, q uint8) (n int, cost int64) {
		prev := int32(q)
		for i := tb.front(q); i != none; i = tb.after(i) {
			nd := &tb.nodes[i]
			if nd.queue != q || nd.prev != prev || nd.pins != 0 {
				t.Fatalf("list %d: node %d has queue %d, prev %d (want %d), pins %d", q, i, nd.queue, nd.prev, prev, nd.pins)
			}
			prev = i
			n++
			cost += nd.cost
			if n > len(tb.nodes) {
				t.Fatalf("list %d has a cycle", q)
			}
		}
		if tb.nodes[q].prev != prev {
			t.Fatalf("list %d: tail %d, want %d", q, tb.nodes[q].prev, prev)
		}
		return n, cost
	}
	check := func(ok bool, format string, args ...any) {
		if !ok {
			t.Fatalf(format, args...)
		}
	}
	// checkTable checks the table's cost sums against its lists and returns
	// how many nodes the lists hold.
	checkTable := func(tb *table) int {
		nl, total := 0, tb.pinned
		for q := range uint8(tb.nlists) {
			nq, cq := walk(tb, q)
			check(cq == tb.listCost[q], "list %d cost %d, list says %d", q, tb.listCost[q], cq)
			nl += nq
			total += cq
		}
		check(tb.total == total, "cost %d, lists and pins say %d", tb.total, total)
		check(nl <= tb.len(), "lists hold %d nodes, Len %d", nl, tb.len())
		return nl
	}
	switch p := p.(type) {
	case *TinyLFU:
		checkTable(&p.t)
		check(p.windowMax >= 0 && p.protMax >= 0, "window %d, protected %d", p.windowMax, p.protMax)
	case *SLRU:
		var cost int64
		n := 0
		for i := range p.segs {
			s := &p.segs[i]
			checkTable(&s.t)
			cost += s.t.total
			n += s.t.len()
		}
		check(p.cost == cost && p.n == n, "cost %d, Len %d; segments say %d, %d", p.cost, p.n, cost, n)
	case *FIFO:
		queued := checkTable(&p.t)
		pinned := 0
		for _, i := range p.t.index {
			if p.t.nodes[i].queue == qPinned {
				pinned++
			}
		}
		// No tombstones: the queue holds every resident entry not pinned.
		check(queued+pinned == p.t.len(), "queue holds %d and %d are pinned, Len %d", queued, pinned, p.t.len())
	case *ARC:
		checkTable(&p.t)
		n := 0
		for _, i := range p.t.index {
			if p.resident(i) {
				n++
			}
		}
		c := p.Capacity()
		t1, b1, b2 := p.t.listCost[qT1], p.t.listCost[qB1], p.t.listCost[qB2]
		check(p.n == n, "Len %d, %d resident nodes", p.n, n)
		check(p.target >= 0 && p.target <= c, "target %d outside [0, %d]", p.target, c)
		check(t1+b1 <= c, "T1 %d and B1 %d exceed capacity %d", t1, b1, c)
		check(p.t.total <= 2*c || b1+b2 == 0, "directory %d exceeds twice capacity %d", p.t.total, c)
	}
}
