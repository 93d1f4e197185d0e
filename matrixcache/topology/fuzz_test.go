package topology

import (
	"bytes"
	"testing"
)

// FuzzDecode checks that Decode never panics, that it accepts only
// canonical encodings (decoding then encoding gives the input back) and
// that what it accepts is a usable ring. Each input is also tried with a
// valid checksum appended, so the fuzzer reaches the parser behind it.
func FuzzDecode(f *testing.F) {
	for _, nodes := range [][]Node{
		nil,
		{{ID: "a", Weight: 1}},
		{{ID: "a", Weight: 1, Domain: "z1"}, {ID: "b", Weight: 2, Domain: "z2", State: Down}, {ID: "c", Weight: 1}},
	} {
		r, err := New(Options{PointsPerWeight: 4}, nodes...)
		if err != nil {
			f.Fatal(err)
		}
		b, err := r.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-4])
	}
	f.Add([]byte("MCRG\x01"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, seal(bytes.Clone(data))} {
			r, err := Decode(in)
			if err != nil {
				if r != nil {
					t.Fatalf("Decode returned a ring and %v", err)
				}
				continue
			}
			out, err := r.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("Decode accepted a non-canonical encoding:\n in %x\nout %x", in, out)
			}
			owners, err := r.Owners(in, 3)
			if r.LiveCount() == 0 {
				if err == nil {
					t.Fatal("placement on a ring with no live node")
				}
				continue
			}
			if err != nil || len(owners) != min(3, r.LiveCount()) {
				t.Fatalf("Owners = %v, %v on %d live nodes", owners, err, r.LiveCount())
			}
		}
	})
}

// FuzzDiff builds two small rings from the input and checks the handoff
// contract on the input's own hash and on every ring point.
func FuzzDiff(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 1, 1, 3, 0}, []byte{4, 2, 1, 2, 0, 3})
	f.Add([]byte{1}, []byte{2})
	f.Add([]byte{0, 0, 0}, []byte{9, 9, 9, 9, 9})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		before, after := fuzzRing(t, a), fuzzRing(t, b)
		handoffs := Diff(before, after)
		hashes := append(append([]uint64{Hash(a), Hash(b), 0, ^uint64(0)}, before.hashes...), after.hashes...)
		for _, h := range hashes {
			from, errFrom := before.OwnerOfHash(h)
			to, errTo := after.OwnerOfHash(h)
			hits := 0
			for _, ho := range handoffs {
				if ho.Contains(h) {
					hits++
					if ho.From != from || ho.To != to {
						t.Fatalf("hash %#x in handoff %s->%s, owners %s->%s", h, ho.From, ho.To, from, to)
					}
				}
			}
			want := 0
			if errFrom == nil && errTo == nil && from != to {
				want = 1
			}
			if hits != want {
				t.Fatalf("hash %#x (%s->%s) in %d handoff ranges, want %d", h, from, to, hits, want)
			}
		}
	})
}

// fuzzRing builds a ring with 2 points per weight from groups of bytes:
// each byte adds a node named after its position, of weight 1 + b%3 and
// domain b/3%3, down if b%7 == 6.
func fuzzRing(t *testing.T, spec []byte) *Ring {
	if len(spec) > 16 {
		spec = spec[:16]
	}
	nodes := make([]Node, len(spec))
	for i, c := range spec {
		nodes[i] = Node{ID: NodeID([]byte{'n', 'a' + byte(i)}), Weight: 1 + int(c%3), Domain: string(rune('x' + c/3%3))}
		if c%7 == 6 {
			nodes[i].State = Down
		}
	}
	r, err := New(Options{PointsPerWeight: 2}, nodes...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
