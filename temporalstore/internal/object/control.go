package object

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// Control is a key's control state: counter buckets (a bucket's start in
// Unix ms and the sum of the amounts added to it, ascending), the distinct
// values added per bucket, a first/last selection, and the ledger of
// request ids seen recently, for idempotent increments.
type Control struct {
	ts   []int64
	sums []int64
	// changes holds each bucket's distinct values.
	changes map[int64]*Distinct
	// Sel is the selection, nil when none was set.
	Sel *Selection
	// seen maps a request id to when it may be applied again (Unix ms).
	seen map[string]int64
	// Pace is a pacer's theoretical arrival time (Unix ms; GCRA), 0 when
	// the key paces nothing.
	Pace int64
	// bytes is the values' and ids' total length, for Object.Size.
	bytes int64
}

// clone is a deep copy of c.
func (c *Control) clone() *Control {
	d := &Control{ts: slices.Clone(c.ts), sums: slices.Clone(c.sums), seen: maps.Clone(c.seen), Pace: c.Pace, bytes: c.bytes}
	if c.changes != nil {
		d.changes = make(map[int64]*Distinct, len(c.changes))
		for b, x := range c.changes {
			d.changes[b] = &Distinct{exact: maps.Clone(x.exact), hll: slices.Clone(x.hll), bytes: x.bytes}
		}
	}
	if c.Sel != nil {
		sel := *c.Sel
		sel.Value = slices.Clone(sel.Value)
		d.Sel = &sel
	}
	return d
}

// Selection is a control state's first or last value.
type Selection struct {
	Value []byte
	// Occur is the value's time (Unix ms).
	Occur int64
	// Last says the selection keeps the latest value, else the earliest.
	Last bool
}

// Len is the number of buckets, change buckets and selection: 0 means
// the state is empty (its ledger alone does not keep a key).
func (c *Control) Len() int {
	n := len(c.ts) + len(c.changes)
	if c.Sel != nil {
		n++
	}
	if c.Pace != 0 {
		n++
	}
	return n
}

// Add adds amount to the bucket starting at ts.
func (c *Control) Add(ts, amount int64) {
	i := sort.Search(len(c.ts), func(i int) bool { return c.ts[i] >= ts })
	if i < len(c.ts) && c.ts[i] == ts {
		c.sums[i] += amount
		return
	}
	c.ts, c.sums = slices.Insert(c.ts, i, ts), slices.Insert(c.sums, i, amount)
}

// TrimBefore drops the counter buckets that start before cut.
func (c *Control) TrimBefore(cut int64) {
	i := sort.Search(len(c.ts), func(i int) bool { return c.ts[i] >= cut })
	c.ts, c.sums = slices.Delete(c.ts, 0, i), slices.Delete(c.sums, 0, i)
}

// Window returns the index range [lo, hi) of the buckets in start..end.
func (c *Control) Window(start, end int64) (lo, hi int) {
	if start > end {
		return 0, 0
	}
	lo = sort.Search(len(c.ts), func(i int) bool { return c.ts[i] >= start })
	hi = lo + sort.Search(len(c.ts)-lo, func(i int) bool { return c.ts[lo+i] > end })
	return lo, hi
}

// Bucket returns bucket i's start and sum.
func (c *Control) Bucket(i int) (int64, int64) { return c.ts[i], c.sums[i] }

// Buckets is the number of counter buckets.
func (c *Control) Buckets() int { return len(c.ts) }

// AddChange adds value to the distinct values of the bucket at ts.
func (c *Control) AddChange(ts int64, value []byte) {
	if c.changes == nil {
		c.changes = map[int64]*Distinct{}
	}
	d := c.changes[ts]
	if d == nil {
		d = &Distinct{}
		c.changes[ts] = d
	}
	before := d.Bytes()
	d.Add(value)
	c.bytes += d.Bytes() - before
}

// DistinctIn estimates the distinct values added to the buckets in
// start..end: exact while every bucket in it is, else from the merged
// sketches.
func (c *Control) DistinctIn(start, end int64) int64 {
	var in []*Distinct
	for ts, d := range c.changes {
		if ts >= start && ts <= end {
			in = append(in, d)
		}
	}
	return Union(in)
}

// ChangeBuckets returns the buckets in start..end holding distinct
// values, ascending.
func (c *Control) ChangeBuckets(start, end int64) []int64 {
	var out []int64
	for ts := range c.changes {
		if ts >= start && ts <= end {
			out = append(out, ts)
		}
	}
	slices.Sort(out)
	return out
}

// Seen reports whether id was recorded and may not be applied before
// until (Unix ms), as of now.
func (c *Control) Seen(id string, now int64) bool { return c.seen[id] > now }

// Record notes id as applied until until, and drops the ids whose time
// has passed at now once the ledger holds more than a few.
func (c *Control) Record(id string, until, now int64) {
	if c.seen == nil {
		c.seen = map[string]int64{}
	}
	if _, ok := c.seen[id]; !ok {
		c.bytes += int64(len(id))
	}
	c.seen[id] = until
	if len(c.seen) > 1024 {
		for k, t := range c.seen {
			if t <= now {
				delete(c.seen, k)
				c.bytes -= int64(len(k))
			}
		}
	}
}

// Select sets the selection: a first one keeps the earliest occurrence
// (replaced only by a strictly earlier one), a last one the latest; a
// selection of the other kind is replaced.
func (c *Control) Select(value []byte, occur int64, last bool) {
	s := c.Sel
	if s != nil && s.Last == last && (last && occur <= s.Occur || !last && occur >= s.Occur) {
		return
	}
	if s != nil {
		c.bytes -= int64(len(s.Value))
	}
	c.Sel = &Selection{Value: value, Occur: occur, Last: last}
	c.bytes += int64(len(value))
}

// Control element tags in an image.
const (
	ctlBucket = 1 // ts varint, sum varint
	ctlExact  = 2 // ts varint, value bytes (one per value)
	ctlSketch = 3 // ts varint, registers bytes
	ctlSelect = 4 // value bytes, occur varint, last byte
	ctlSeen   = 5 // id bytes, until varint
	ctlPace   = 6 // theoretical arrival time varint
)

func errImage(msg string) error { return fmt.Errorf("%w: %s", ErrImage, msg) }

// elements is the number of image elements of c.
func (c *Control) elements() int {
	n := len(c.ts) + len(c.seen)
	for _, d := range c.changes {
		if d.hll != nil {
			n++
		} else {
			n += len(d.exact)
		}
	}
	if c.Sel != nil {
		n++
	}
	if c.Pace != 0 {
		n++
	}
	return n
}

func (c *Control) appendImage(dst []byte) []byte {
	for i := range c.ts {
		dst = append(dst, ctlBucket)
		dst = binary.AppendVarint(binary.AppendVarint(dst, c.ts[i]), c.sums[i])
	}
	for _, ts := range slices.Sorted(maps.Keys(c.changes)) {
		d := c.changes[ts]
		if d.hll != nil {
			dst = binary.AppendVarint(append(dst, ctlSketch), ts)
			dst = appendBytes(dst, d.hll)
			continue
		}
		for _, v := range slices.Sorted(maps.Keys(d.exact)) {
			dst = binary.AppendVarint(append(dst, ctlExact), ts)
			dst = appendBytes(dst, []byte(v))
		}
	}
	if s := c.Sel; s != nil {
		dst = appendBytes(append(dst, ctlSelect), s.Value)
		dst = binary.AppendVarint(dst, s.Occur)
		last := byte(0)
		if s.Last {
			last = 1
		}
		dst = append(dst, last)
	}
	for _, id := range slices.Sorted(maps.Keys(c.seen)) {
		dst = appendBytes(append(dst, ctlSeen), []byte(id))
		dst = binary.AppendVarint(dst, c.seen[id])
	}
	if c.Pace != 0 {
		dst = binary.AppendVarint(append(dst, ctlPace), c.Pace)
	}
	return dst
}

// decodeElement reads one image element into c.
func (c *Control) decodeElement(d *decoder) error {
	if d.off >= len(d.b) {
		return errImage("truncated control element")
	}
	tag := d.b[d.off]
	d.off++
	switch tag {
	case ctlBucket:
		ts, err := d.varint()
		if err != nil {
			return err
		}
		sum, err := d.varint()
		if err != nil {
			return err
		}
		if n := len(c.ts); n > 0 && ts <= c.ts[n-1] {
			return errImage("control buckets out of order")
		}
		c.ts, c.sums = append(c.ts, ts), append(c.sums, sum)
	case ctlExact, ctlSketch:
		ts, err := d.varint()
		if err != nil {
			return err
		}
		v, err := d.bytes()
		if err != nil {
			return err
		}
		if tag == ctlExact {
			c.AddChange(ts, clone(v))
			return nil
		}
		if len(v) != hllRegisters || c.changes[ts] != nil {
			return errImage("bad distinct sketch")
		}
		if c.changes == nil {
			c.changes = map[int64]*Distinct{}
		}
		c.changes[ts] = &Distinct{hll: clone(v)}
		c.bytes += hllRegisters
	case ctlSelect:
		v, err := d.bytes()
		if err != nil {
			return err
		}
		occur, err := d.varint()
		if err != nil {
			return err
		}
		if d.off >= len(d.b) || d.b[d.off] > 1 || c.Sel != nil {
			return errImage("bad selection")
		}
		c.Sel = &Selection{Value: clone(v), Occur: occur, Last: d.b[d.off] == 1}
		c.bytes += int64(len(v))
		d.off++
	case ctlSeen:
		id, err := d.bytes()
		if err != nil {
			return err
		}
		until, err := d.varint()
		if err != nil {
			return err
		}
		if c.seen == nil {
			c.seen = map[string]int64{}
		}
		c.seen[string(id)] = until
		c.bytes += int64(len(id))
	case ctlPace:
		tat, err := d.varint()
		if err != nil {
			return err
		}
		if tat == 0 || c.Pace != 0 {
			return errImage("bad pace")
		}
		c.Pace = tat
	default:
		return errImage("unknown control element")
	}
	return nil
}

// Distinct is a set of values, exact up to DistinctExactMax values and a
// HyperLogLog sketch (4096 registers) beyond.
type Distinct struct {
	exact map[string]struct{}
	hll   []byte
	// bytes is the exact values' total length.
	bytes int64
}

// DistinctExactMax is how many values a Distinct holds exactly.
const DistinctExactMax = 4096

const (
	hllBits      = 12
	hllRegisters = 1 << hllBits
)

// Add adds v.
func (d *Distinct) Add(v []byte) {
	if d.hll != nil {
		registers(d.hll).add(v)
		return
	}
	if d.exact == nil {
		d.exact = map[string]struct{}{}
	}
	if _, ok := d.exact[string(v)]; !ok {
		d.exact[string(v)] = struct{}{}
		d.bytes += int64(len(v))
	}
	if len(d.exact) > DistinctExactMax {
		d.hll = make([]byte, hllRegisters)
		for x := range d.exact {
			registers(d.hll).add([]byte(x))
		}
		d.exact, d.bytes = nil, 0
	}
}

// Bytes is the memory the set's values or registers take.
func (d *Distinct) Bytes() int64 {
	if d.hll != nil {
		return hllRegisters
	}
	return d.bytes
}

// Union counts the distinct values of ds together: exactly when none is a
// sketch, else the estimate of their merged registers.
func Union(ds []*Distinct) int64 {
	sketched := false
	for _, d := range ds {
		sketched = sketched || d.hll != nil
	}
	if !sketched {
		all := map[string]struct{}{}
		for _, d := range ds {
			maps.Copy(all, d.exact)
		}
		return int64(len(all))
	}
	m := make(registers, hllRegisters)
	for _, d := range ds {
		if d.hll != nil {
			for i, r := range d.hll {
				m[i] = max(m[i], r)
			}
			continue
		}
		for x := range d.exact {
			m.add([]byte(x))
		}
	}
	return m.estimate()
}

type registers []byte

// hash64 is FNV-1a finished with splitmix64, as the original's sketch.
func hash64(v []byte) uint64 {
	h := fnv.New64a()
	h.Write(v)
	x := h.Sum64() + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (r registers) add(v []byte) {
	h := hash64(v)
	i := h >> (64 - hllBits)
	rank := byte(bits.LeadingZeros64(h<<hllBits|1<<(hllBits-1)) + 1)
	r[i] = max(r[i], rank)
}

func (r registers) estimate() int64 {
	const m = float64(hllRegisters)
	sum, zeros := 0.0, 0
	for _, x := range r {
		sum += math.Ldexp(1, -int(x))
		if x == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros)) // linear counting for small sets
	}
	return int64(e + 0.5)
}
