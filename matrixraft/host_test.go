package matrixraft

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

var testHostOptions = HostOptions{WAL: testWAL}

// TestHostStorageMatchesStandalone drives several groups on one shared log
// and, for each, a standalone Storage with the same operations — appends,
// overwrites under a new term, snapshots that compact — and checks after a
// reopen that every group recovers exactly what its standalone twin does:
// also when every compaction re-homes the groups its snapshots cover.
func TestHostStorageMatchesStandalone(t *testing.T) {
	tests := []struct {
		name    string
		opts    HostOptions
		rehomes bool
	}{
		{"default pin bound", testHostOptions, false},
		{
			// Small segments, so that groups hold sealed ones back.
			name:    "every sealed segment re-homes",
			opts:    HostOptions{WAL: wal.Options{SegmentSize: 8 << 10, Sync: wal.SyncNever}, MaxRecordBytes: 4 << 10, MaxPinnedBytes: 1},
			rehomes: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testHostStorageMatchesStandalone(t, tt.opts, tt.rehomes)
		})
	}
}

func testHostStorageMatchesStandalone(t *testing.T, opts HostOptions, rehomes bool) {
	const groups = 5
	dir := t.TempDir()
	h, err := OpenHost(dir, opts)
	require.NoError(t, err)
	shared := map[uint64]*Storage{}
	alone := map[uint64]*Storage{}
	aloneDirs := map[uint64]string{}
	for g := uint64(1); g <= groups; g++ {
		shared[g], err = h.Storage(g)
		require.NoError(t, err)
		aloneDirs[g] = t.TempDir()
		alone[g] = openTestStorage(t, aloneDirs[g])
	}
	_, err = h.Storage(1)
	require.ErrorIs(t, err, ErrGroupInUse)

	type state struct{ last, term, committed uint64 }
	st := map[uint64]*state{}
	for g := uint64(1); g <= groups; g++ {
		st[g] = &state{term: 1}
	}
	r := rand.New(rand.NewPCG(3, 4))
	ctx := t.Context()
	for step := range 600 {
		g := uint64(1 + r.IntN(groups))
		if g == groups && step < 400 {
			continue // one group stays idle for a while: it holds the log's front
		}
		s := st[g]
		from := s.last + 1
		if r.IntN(8) == 0 && s.last > s.committed+2 {
			s.term++
			from = s.last - 1
		}
		n := uint64(1 + r.IntN(5))
		var batch []*pb.Entry
		for i := from; i < from+n; i++ {
			pad := make([]byte, r.IntN(2000))
			for j := range pad {
				pad[j] = byte(r.Uint32()) // incompressible: the records fill segments
			}
			batch = append(batch, ent(i, s.term, fmt.Sprintf("g%d/%d/%d/%s", g, i, s.term, pad)))
		}
		s.last = from + n - 1
		s.committed = max(s.committed, from-1)
		for _, x := range []*Storage{shared[g], alone[g]} {
			require.NoError(t, x.Save(ctx, hs(s.term, 1, s.committed), batch, nil, true))
		}
		if r.IntN(20) == 0 {
			// Everything commits and a snapshot covers it: until it
			// writes again the group needs only that and its HardState.
			s.committed = s.last
			for _, x := range []*Storage{shared[g], alone[g]} {
				require.NoError(t, x.Save(ctx, hs(s.term, 1, s.committed), nil, nil, true))
				require.NoError(t, x.CreateSnapshot(ctx, s.committed, &pb.ConfState{Voters: []uint64{g}}, fmt.Appendf(nil, "g%d@%d", g, s.committed), 3))
			}
		} else if r.IntN(15) == 0 && s.committed > shared[g].SnapshotIndex() {
			for _, x := range []*Storage{shared[g], alone[g]} {
				require.NoError(t, x.CreateSnapshot(ctx, s.committed, &pb.ConfState{Voters: []uint64{g}}, fmt.Appendf(nil, "g%d@%d", g, s.committed), 3))
			}
		}
	}
	// The idle group had no snapshot, so nothing before its first record
	// may have gone.
	require.LessOrEqual(t, h.log.FirstIndex(), shared[groups].spans[0].walIndex)
	t.Logf("log [%d, %d] in %d segments", h.log.FirstIndex(), h.log.LastIndex(), h.log.Stats().Segments)
	var moved uint64
	for g := uint64(1); g <= groups; g++ {
		moved += shared[g].Rehomes()
		require.NoError(t, shared[g].Close())
		require.NoError(t, alone[g].Close())
	}
	t.Logf("%d re-homes", moved)
	if rehomes {
		require.Positive(t, moved)
	} else {
		require.Zero(t, moved)
	}
	require.NoError(t, h.Close())

	h, err = OpenHost(dir, opts)
	require.NoError(t, err)
	defer h.Close()
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, h.Groups())
	for g := uint64(1); g <= groups; g++ {
		t.Run(fmt.Sprintf("group %d", g), func(t *testing.T) {
			got, err := h.Storage(g)
			require.NoError(t, err)
			defer got.Close()
			want := openTestStorage(t, aloneDirs[g])
			defer want.Close()
			f1, l1, t1 := logTerms(t, got)
			f2, l2, t2 := logTerms(t, want)
			require.Equal(t, []uint64{f2, l2}, []uint64{f1, l1})
			require.Equal(t, t2, t1)
			require.Equal(t, want.SnapshotIndex(), got.SnapshotIndex())
			require.Equal(t, hsFrom(want.HardState()), hsFrom(got.HardState()))
			e1, err := got.Entries(f1, l1+1, 1<<30)
			require.NoError(t, err)
			e2, err := want.Entries(f2, l2+1, 1<<30)
			require.NoError(t, err)
			for i := range e1 {
				require.Equal(t, e2[i].GetData(), e1[i].GetData())
			}
			if got.SnapshotIndex() > 0 {
				snap, err := got.Snapshot()
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("g%d@%d", g, got.SnapshotIndex()), string(snap.GetData()))
			}
		})
	}
}

// TestHostCompactionFence checks that the shared log's front moves only
// once every group's snapshot covers the records there, and that a group
// needing only its snapshot record and HardState, written first, is moved
// to the log's head instead of holding the front back.
func TestHostCompactionFence(t *testing.T) {
	// Any sealed segment a group holds gets it moved. SyncInterval: the
	// log is synced before each truncation.
	opts := HostOptions{WAL: wal.Options{SegmentSize: testWAL.SegmentSize, Sync: wal.SyncInterval}, MaxPinnedBytes: 1}
	h, err := OpenHost(t.TempDir(), opts)
	require.NoError(t, err)
	defer h.Close()
	a, err := h.Storage(1)
	require.NoError(t, err)
	b, err := h.Storage(2)
	require.NoError(t, err)
	c, err := h.Storage(3)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, c.Save(ctx, hs(1, 1, 1), ents(1, 1, 1), nil, true))
	require.NoError(t, c.CreateSnapshot(ctx, 1, &pb.ConfState{Voters: []uint64{1}}, []byte("c"), 0))
	cLast := h.log.LastIndex()
	// The front never passes a record some group needs.
	checkFences := func() {
		t.Helper()
		for _, x := range []*Storage{a, b, c} {
			x.mu.Lock()
			fence := x.fenceLocked()
			x.mu.Unlock()
			require.LessOrEqual(t, h.log.FirstIndex(), fence, "group %d", x.opts.Group)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 3000) // incompressible: the records fill segments
	for i := uint64(1); i <= 100; i++ {
		for _, x := range []*Storage{a, b} {
			for j := range big {
				big[j] = byte(r.Uint32())
			}
			require.NoError(t, x.Save(ctx, hs(1, 1, i), []*pb.Entry{ent(i, 1, string(big))}, nil, true))
		}
	}
	front := h.log.FirstIndex()
	require.Greater(t, h.log.Stats().Segments, 2)
	require.Zero(t, c.Rehomes())
	require.NoError(t, a.CreateSnapshot(ctx, 90, &pb.ConfState{Voters: []uint64{1}}, []byte("a"), 0))
	require.Equal(t, front, h.log.FirstIndex(), "group 2 still needs every record")
	require.Equal(t, uint64(1), c.Rehomes(), "group 3 held every sealed segment")
	require.Zero(t, a.Rehomes()+b.Rehomes(), "groups 1 and 2 have entries to keep")
	checkFences()
	require.NoError(t, b.CreateSnapshot(ctx, 60, &pb.ConfState{Voters: []uint64{1}}, []byte("b"), 0))
	require.Greater(t, h.log.FirstIndex(), cLast, "both snapshots cover the front, and group 3 was moved")
	checkFences()
	for _, x := range []*Storage{a, b, c} {
		require.NoError(t, x.Close())
	}
	require.NoError(t, h.Close())

	// Each group recovers every entry after its own snapshot, and group 3
	// its snapshot and HardState from the copy at the head.
	h, err = OpenHost(h.dir, opts)
	require.NoError(t, err)
	defer h.Close()
	for _, c := range []struct{ group, snap, last uint64 }{{1, 90, 100}, {2, 60, 100}, {3, 1, 1}} {
		s, err := h.Storage(c.group)
		require.NoError(t, err)
		first, last, _ := logTerms(t, s)
		require.Equal(t, c.snap+1, first)
		require.Equal(t, c.last, last)
		require.Equal(t, c.snap, s.SnapshotIndex())
		require.Equal(t, hardState{1, 1, c.last}, hsFrom(s.HardState()))
	}
}

// TestHostIdleGroupsDoNotPinTheLog writes a busy group that snapshots
// often beside idle groups that need only their HardState and snapshot
// record — open or handed back to the host. The shared log's front must
// keep up with the busy group instead of staying at the idle groups'
// records, and after a reopen every group recovers the state it had.
func TestHostIdleGroupsDoNotPinTheLog(t *testing.T) {
	idle := []struct {
		name     string
		group    uint64
		write    func(t *testing.T, s *Storage)
		handBack bool
		snap     uint64
		hs       hardState
	}{
		{
			name:  "covered by its snapshot",
			group: 2,
			write: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 5), ents(1, 5, 1), nil, true))
				require.NoError(t, s.CreateSnapshot(t.Context(), 5, &pb.ConfState{Voters: []uint64{1}}, []byte("g2@5"), 0))
			},
			snap: 5,
			hs:   hardState{1, 1, 5},
		},
		{
			name:  "a HardState only",
			group: 3,
			write: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(3, 2, 0), nil, nil, true))
			},
			hs: hardState{3, 2, 0},
		},
		{
			name:  "handed back",
			group: 4,
			write: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(2, 1, 7), ents(1, 7, 2), nil, true))
				require.NoError(t, s.CreateSnapshot(t.Context(), 7, &pb.ConfState{Voters: []uint64{1}}, []byte("g4@7"), 2))
			},
			handBack: true,
			snap:     7,
			hs:       hardState{2, 1, 7},
		},
	}
	dir := t.TempDir()
	// One testWAL segment: a group may hold one sealed segment back.
	opts := HostOptions{WAL: testWAL, MaxPinnedBytes: testWAL.SegmentSize}
	h, err := OpenHost(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	stores := map[uint64]*Storage{}
	for _, g := range idle {
		s, err := h.Storage(g.group)
		require.NoError(t, err)
		g.write(t, s)
		if g.handBack {
			require.NoError(t, s.Close())
		}
		stores[g.group] = s
	}
	idleLast := h.log.LastIndex()

	busy, err := h.Storage(1)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	big := make([]byte, 3000) // incompressible: the records fill segments
	const entries = 400
	for i := uint64(1); i <= entries; i++ {
		for j := range big {
			big[j] = byte(r.Uint32())
		}
		require.NoError(t, busy.Save(ctx, hs(1, 1, i), []*pb.Entry{ent(i, 1, string(big))}, nil, true))
		if i%10 == 0 {
			require.NoError(t, busy.CreateSnapshot(ctx, i, &pb.ConfState{Voters: []uint64{1}}, fmt.Appendf(nil, "g1@%d", i), 0))
			// The busy group holds 10 entries back, under one segment; an
			// idle group one more sealed segment before it is moved.
			require.LessOrEqual(t, h.log.Stats().Segments, 4, "entry %d", i)
		}
	}
	require.Greater(t, h.log.FirstIndex(), idleLast, "the idle groups' first records are gone")
	for _, g := range idle {
		require.Positive(t, stores[g.group].Rehomes(), g.name)
	}
	require.NoError(t, busy.Close())
	for _, g := range idle {
		if !g.handBack {
			require.NoError(t, stores[g.group].Close())
		}
	}
	require.NoError(t, h.Close())

	h, err = OpenHost(dir, opts)
	require.NoError(t, err)
	defer h.Close()
	require.Equal(t, []uint64{1, 2, 3, 4}, h.Groups())
	for _, g := range idle {
		t.Run(g.name, func(t *testing.T) {
			s, err := h.Storage(g.group)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, g.hs, hsFrom(s.HardState()))
			require.Equal(t, g.snap, s.SnapshotIndex())
			first, last, _ := logTerms(t, s)
			require.Equal(t, []uint64{g.snap + 1, g.snap}, []uint64{first, last}, "no entries after the snapshot")
			if g.snap > 0 {
				snap, err := s.Snapshot()
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("g%d@%d", g.group, g.snap), string(snap.GetData()))
			}
		})
	}
	s, err := h.Storage(1)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, uint64(entries), s.SnapshotIndex())
	require.Equal(t, hardState{1, 1, entries}, hsFrom(s.HardState()))
}

func TestHostOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts HostOptions
		want error
	}{
		{"defaults", HostOptions{}, nil},
		{"negative MaxRecordBytes", HostOptions{MaxRecordBytes: -1}, ErrInvalidOptions},
		{"negative MaxPinnedBytes", HostOptions{MaxPinnedBytes: -1}, ErrInvalidOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts.withDefaults()
			require.ErrorIs(t, o.Validate(), tt.want)
			if tt.want == nil {
				require.Equal(t, int64(DefaultMaxPinnedBytes), o.MaxPinnedBytes)
				return
			}
			_, err := OpenHost(t.TempDir(), tt.opts)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestPinLimit checks the lowest log index a group may need for each
// bound: the segment holding it and every later sealed one are what it
// holds back; the last segment is never dropped, so it counts for nothing.
func TestPinLimit(t *testing.T) {
	segs := []wal.SegmentInfo{{First: 1, Bytes: 100}, {First: 10, Bytes: 100}, {First: 20, Bytes: 100}, {First: 30, Bytes: 40}}
	tests := []struct {
		name      string
		segs      []wal.SegmentInfo
		maxPinned int64
		want      uint64
	}{
		{"no segments", nil, 1, 0},
		{"one segment holds nothing back", segs[:1], 0, 1},
		{"nothing sealed may be held", segs, 0, 30},
		{"less than a segment", segs, 99, 30},
		{"one segment", segs, 100, 20},
		{"two segments", segs, 250, 10},
		{"every sealed segment", segs, 300, 1},
		{"more than the log", segs, 1 << 30, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, pinLimit(tt.segs, tt.maxPinned))
		})
	}
}

func FuzzHostSplit(f *testing.F) {
	h := hardState{1, 1, 1}
	r1, _ := encodeState(nil, 1, &h, ents(1, 2, 1))
	r2, _ := encodeState(nil, 300, nil, ents(1, 1, 1))
	r3 := encodeSnapshotMarker(nil, 2, true, 9, 2, h)
	var seed []byte
	for _, r := range [][]byte{r1, r2, r3, r1} {
		seed = binary.AppendUvarint(seed, uint64(len(r)))
		seed = append(seed, r...)
	}
	f.Add(seed)
	f.Add([]byte{3, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		// b is a run of length-prefixed records.
		out := map[uint64][]indexedRecord{}
		var n uint64
		for len(b) > 0 {
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return
			}
			raw := b[k : k+int(l)]
			b = b[k+int(l):]
			n++
			rec, decErr := decodeRecord(raw)
			err := splitRecord(out, n, raw)
			if decErr != nil || rec.group == 0 {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			got := out[rec.group]
			require.Equal(t, n, got[len(got)-1].walIndex)
		}
		var total uint64
		for g, recs := range out {
			for i, r := range recs {
				require.Equal(t, g, r.rec.group)
				if i > 0 {
					require.Greater(t, r.walIndex, recs[i-1].walIndex)
				}
			}
			total += uint64(len(recs))
		}
		require.Equal(t, n, total)
	})
}
