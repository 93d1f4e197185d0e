package matrixraft

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"
)

var testHostOptions = HostOptions{WAL: testWAL}

// TestHostStorageMatchesStandalone drives several groups on one shared log
// and, for each, a standalone Storage with the same operations — appends,
// overwrites under a new term, snapshots that compact — and checks after a
// reopen that every group recovers exactly what its standalone twin does.
func TestHostStorageMatchesStandalone(t *testing.T) {
	const groups = 5
	dir := t.TempDir()
	h, err := OpenHost(dir, testHostOptions)
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
			batch = append(batch, ent(i, s.term, fmt.Sprintf("g%d/%d/%d/%s", g, i, s.term, string(make([]byte, r.IntN(2000))))))
		}
		s.last = from + n - 1
		s.committed = max(s.committed, from-1)
		for _, x := range []*Storage{shared[g], alone[g]} {
			require.NoError(t, x.Save(ctx, hs(s.term, 1, s.committed), batch, nil, true))
		}
		if r.IntN(15) == 0 && s.committed > shared[g].SnapshotIndex() {
			for _, x := range []*Storage{shared[g], alone[g]} {
				require.NoError(t, x.CreateSnapshot(ctx, s.committed, &pb.ConfState{Voters: []uint64{g}}, fmt.Appendf(nil, "g%d@%d", g, s.committed), 3))
			}
		}
	}
	// The idle group had no snapshot, so nothing before its first record
	// may have gone.
	require.LessOrEqual(t, h.log.FirstIndex(), shared[groups].spans[0].walIndex)
	for g := uint64(1); g <= groups; g++ {
		require.NoError(t, shared[g].Close())
		require.NoError(t, alone[g].Close())
	}
	require.NoError(t, h.Close())

	h, err = OpenHost(dir, testHostOptions)
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
// once every group's snapshot covers the records there.
func TestHostCompactionFence(t *testing.T) {
	h, err := OpenHost(t.TempDir(), testHostOptions)
	require.NoError(t, err)
	defer h.Close()
	a, err := h.Storage(1)
	require.NoError(t, err)
	b, err := h.Storage(2)
	require.NoError(t, err)
	ctx := t.Context()
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
	require.NoError(t, a.CreateSnapshot(ctx, 90, &pb.ConfState{Voters: []uint64{1}}, []byte("a"), 0))
	require.Equal(t, front, h.log.FirstIndex(), "group 2 still needs every record")
	require.NoError(t, b.CreateSnapshot(ctx, 60, &pb.ConfState{Voters: []uint64{1}}, []byte("b"), 0))
	require.Greater(t, h.log.FirstIndex(), front, "both snapshots cover the front")
	require.NoError(t, b.Close())
	require.NoError(t, a.Close())
	require.NoError(t, h.Close())

	// Each group recovers every entry after its own snapshot.
	h, err = OpenHost(h.dir, testHostOptions)
	require.NoError(t, err)
	defer h.Close()
	for _, c := range []struct{ group, snap uint64 }{{1, 90}, {2, 60}} {
		s, err := h.Storage(c.group)
		require.NoError(t, err)
		first, last, _ := logTerms(t, s)
		require.Equal(t, c.snap+1, first)
		require.Equal(t, uint64(100), last)
		require.Equal(t, c.snap, s.SnapshotIndex())
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
