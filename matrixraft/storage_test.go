package matrixraft

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

func ent(index, term uint64, data string) *pb.Entry {
	return &pb.Entry{Index: new(index), Term: new(term), Type: new(pb.EntryNormal), Data: []byte(data)}
}

func ents(from, to, term uint64) []*pb.Entry {
	var out []*pb.Entry
	for i := from; i <= to; i++ {
		out = append(out, ent(i, term, "x"))
	}
	return out
}

func hs(term, vote, commit uint64) *pb.HardState {
	return &pb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

var testWAL = wal.Options{SegmentSize: 64 << 10, Sync: wal.SyncNever}

func openTestStorage(t *testing.T, dir string) *Storage {
	t.Helper()
	s, err := OpenStorage(dir, StorageOptions{WAL: testWAL})
	require.NoError(t, err)
	return s
}

func logTerms(t *testing.T, s *Storage) (first, last uint64, terms []uint64) {
	t.Helper()
	first, _ = s.FirstIndex()
	last, _ = s.LastIndex()
	for i := first; i <= last; i++ {
		tm, err := s.Term(i)
		require.NoError(t, err)
		terms = append(terms, tm)
	}
	return first, last, terms
}

func TestStorageRecovery(t *testing.T) {
	tests := []struct {
		name       string
		steps      func(t *testing.T, s *Storage)
		first      uint64
		last       uint64
		terms      []uint64
		hs         *pb.HardState
		snapIndex  uint64
		confVoters []uint64
	}{
		{
			name: "entries and hard state",
			steps: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 2), ents(1, 3, 1), nil, true))
			},
			first: 1, last: 3, terms: []uint64{1, 1, 1}, hs: hs(1, 1, 2),
		},
		{
			name: "conflicting suffix is truncated",
			steps: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 2), ents(1, 5, 1), nil, true))
				require.NoError(t, s.Save(t.Context(), hs(2, 2, 3), ents(4, 4, 2), nil, true))
			},
			first: 1, last: 4, terms: []uint64{1, 1, 1, 2}, hs: hs(2, 2, 3),
		},
		{
			name: "local snapshot keeps later entries",
			steps: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 8), ents(1, 10, 1), nil, true))
				cs := &pb.ConfState{Voters: []uint64{1, 2, 3}}
				require.NoError(t, s.CreateSnapshot(t.Context(), 8, cs, []byte("state@8"), 2))
			},
			first: 9, last: 10, terms: []uint64{1, 1}, hs: hs(1, 1, 8), snapIndex: 8, confVoters: []uint64{1, 2, 3},
		},
		{
			name: "installed snapshot discards the old log",
			steps: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 3), ents(1, 10, 1), nil, true))
				snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(20)), Term: new(uint64(3)), ConfState: &pb.ConfState{Voters: []uint64{1, 2}}}, Data: []byte("s")}
				require.NoError(t, s.Save(t.Context(), hs(3, 0, 20), nil, snap, true))
				require.NoError(t, s.Save(t.Context(), hs(3, 0, 21), ents(21, 22, 3), nil, true))
			},
			first: 21, last: 22, terms: []uint64{3, 3}, hs: hs(3, 0, 21), snapIndex: 20, confVoters: []uint64{1, 2},
		},
		{
			name: "commit-only change without sync is not written",
			steps: func(t *testing.T, s *Storage) {
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 1), ents(1, 3, 1), nil, true))
				require.NoError(t, s.Save(t.Context(), hs(1, 1, 3), nil, nil, false))
			},
			first: 1, last: 3, terms: []uint64{1, 1, 1}, hs: hs(1, 1, 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTestStorage(t, dir)
			tt.steps(t, s)
			require.NoError(t, s.Close())

			s = openTestStorage(t, dir)
			defer s.Close()
			first, last, terms := logTerms(t, s)
			require.Equal(t, tt.first, first)
			require.Equal(t, tt.last, last)
			require.Equal(t, tt.terms, terms)
			gotHS, cs, err := s.InitialState()
			require.NoError(t, err)
			require.Equal(t, hsFrom(tt.hs), hsFrom(gotHS))
			require.Equal(t, tt.snapIndex, s.SnapshotIndex())
			require.Equal(t, tt.confVoters, cs.GetVoters())
		})
	}
}

func TestStorageCompactionFence(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	big := make([]byte, 4<<10)
	for i := range big {
		big[i] = byte(i*7919 + i/13)
	}
	var term uint64 = 1
	for i := uint64(1); i <= 200; i++ {
		rand.Read(big)
		e := &pb.Entry{Index: new(i), Term: new(term), Data: append([]byte(nil), big...)}
		require.NoError(t, s.Save(t.Context(), hs(1, 1, i), []*pb.Entry{e}, nil, true))
	}
	before := s.log.FirstIndex()
	require.NoError(t, s.CreateSnapshot(t.Context(), 150, &pb.ConfState{Voters: []uint64{1}}, []byte("s150"), 10))
	after := s.log.FirstIndex()
	require.Greater(t, after, before, "segments behind the snapshot are dropped")
	require.NoError(t, s.Close())

	s = openTestStorage(t, dir)
	defer s.Close()
	first, last, _ := logTerms(t, s)
	require.Equal(t, uint64(151), first, "every entry after the snapshot survives")
	require.Equal(t, uint64(200), last)
	snap, err := s.Snapshot()
	require.NoError(t, err)
	require.Equal(t, []byte("s150"), snap.GetData())
	_, err = s.Entries(100, 120, 1<<30)
	require.ErrorIs(t, err, raft.ErrCompacted)
}

func TestStorageRecordRoundTrip(t *testing.T) {
	h := hardState{3, 2, 9}
	b, err := encodeState(nil, 7, &h, ents(5, 7, 3))
	require.NoError(t, err)
	rec, err := decodeRecord(b)
	require.NoError(t, err)
	require.Equal(t, uint64(7), rec.group)
	require.Equal(t, h, rec.hs)
	require.Len(t, rec.entries, 3)
	require.Equal(t, uint64(7), rec.entries[2].GetIndex())

	m := encodeSnapshotMarker(nil, 1, true, 40, 4, h)
	rec, err = decodeRecord(m)
	require.NoError(t, err)
	require.True(t, rec.installed)
	require.Equal(t, uint64(40), rec.snapIndex)
	_, err = decodeRecord(m[:len(m)-1])
	require.ErrorIs(t, err, ErrCorrupt)
}

func FuzzDecodeRecord(f *testing.F) {
	h := hardState{1, 1, 1}
	b, _ := encodeState(nil, 1, &h, ents(1, 2, 1))
	f.Add(b)
	f.Add(encodeSnapshotMarker(nil, 1, false, 9, 2, h))
	f.Add([]byte{1, 1, 0, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeRecord(b)
		if err != nil {
			return
		}
		if rec.kind == recState {
			again, err := encodeState(nil, rec.group, map[bool]*hardState{true: &rec.hs}[rec.hasHS], rec.entries)
			require.NoError(t, err)
			_, err = decodeRecord(again)
			require.NoError(t, err)
		}
	})
}

func FuzzDecodeSnapshotFile(f *testing.F) {
	b, _ := encodeSnapshotFile(&pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(3)), Term: new(uint64(1))}, Data: []byte("abc")})
	f.Add(b)
	f.Add([]byte(snapMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshotFile(b)
		if err != nil {
			return
		}
		again, err := encodeSnapshotFile(s)
		require.NoError(t, err)
		_, err = decodeSnapshotFile(again)
		require.NoError(t, err)
	})
}

// TestStorageSnapshotBesideSave covers a node's background snapshot: one
// created while Saves go on (here: after a newer snapshot was installed, and
// after newer HardStates) never rolls anything back.
func TestStorageSnapshotBesideSave(t *testing.T) {
	dir := t.TempDir()
	s := openTestStorage(t, dir)
	ctx := t.Context()
	require.NoError(t, s.Save(ctx, hs(1, 1, 100), ents(1, 100, 1), nil, true))
	// A snapshot of index 50 was taken; before it is written a leader
	// installs a snapshot at 200 and the term moves on.
	installed := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(200)), Term: new(uint64(2)), ConfState: &pb.ConfState{Voters: []uint64{1}}}, Data: []byte("s200")}
	require.NoError(t, s.Save(ctx, hs(2, 3, 200), nil, installed, true))
	require.NoError(t, s.Save(ctx, hs(3, 0, 205), ents(201, 205, 3), nil, true))
	require.NoError(t, s.CreateSnapshot(ctx, 50, &pb.ConfState{Voters: []uint64{1}}, []byte("s50"), 5))
	require.Equal(t, uint64(200), s.SnapshotIndex())
	// A snapshot at 203 taken now carries the newest HardState.
	require.NoError(t, s.CreateSnapshot(ctx, 203, &pb.ConfState{Voters: []uint64{1}}, []byte("s203"), 1))
	require.NoError(t, s.Close())

	s = openTestStorage(t, dir)
	defer s.Close()
	require.Equal(t, uint64(203), s.SnapshotIndex())
	h, _, _ := s.InitialState()
	require.Equal(t, hsFrom(hs(3, 0, 205)), hsFrom(h))
	first, last, terms := logTerms(t, s)
	require.Equal(t, []uint64{204, 205}, []uint64{first, last})
	require.Equal(t, []uint64{3, 3}, terms)
}

// TestStorageSaveBatch checks that several Readys saved as one batch —
// one of them overwriting the suffix of an earlier one — recover exactly
// as the same Readys saved one by one.
func TestStorageSaveBatch(t *testing.T) {
	reqs := []saveReq{
		{hs(1, 1, 0), ents(1, 5, 1)},
		{nil, ents(6, 8, 1)},
		{hs(2, 2, 5), ents(7, 9, 2)}, // a new leader replaces 7 and 8
		{hs(2, 2, 8), nil},           // a commit index alone
	}
	one, batch := t.TempDir(), t.TempDir()
	s := openTestStorage(t, one)
	for _, r := range reqs {
		require.NoError(t, s.Save(t.Context(), r.hs, r.ents, nil, true))
	}
	require.NoError(t, s.Close())
	s = openTestStorage(t, batch)
	require.NoError(t, s.saveBatch(t.Context(), reqs))
	require.Equal(t, uint64(1), s.Fsyncs())
	_, _, terms := logTerms(t, s)
	require.Equal(t, []uint64{1, 1, 1, 1, 1, 1, 2, 2, 2}, terms, "in memory")
	require.NoError(t, s.Close())

	a, b := openTestStorage(t, one), openTestStorage(t, batch)
	defer a.Close()
	defer b.Close()
	f1, l1, t1 := logTerms(t, a)
	f2, l2, t2 := logTerms(t, b)
	require.Equal(t, []uint64{f1, l1}, []uint64{f2, l2})
	require.Equal(t, t1, t2)
	require.Equal(t, hsFrom(a.HardState()), hsFrom(b.HardState()))
	require.Equal(t, hardState{2, 2, 8}, hsFrom(b.HardState()))
}

// TestStorageSnapshotData checks the data Snapshot returns, which Storage
// keeps beside raft's MemoryStorage: always the data of the newest
// snapshot, whether created here, installed from a leader or recovered,
// and never an older one's.
func TestStorageSnapshotData(t *testing.T) {
	cs := &pb.ConfState{Voters: []uint64{1}}
	installed := func(index, term uint64, data string) *pb.Snapshot {
		return &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: cs}, Data: []byte(data)}
	}
	tests := []struct {
		name      string
		steps     func(t *testing.T, s *Storage)
		wantIndex uint64
		wantData  string
	}{
		{"none", func(*testing.T, *Storage) {}, 0, ""},
		{"created", func(t *testing.T, s *Storage) {
			require.NoError(t, s.CreateSnapshot(t.Context(), 40, cs, []byte("s40"), 5))
			require.NoError(t, s.CreateSnapshot(t.Context(), 80, cs, []byte("s80"), 5))
		}, 80, "s80"},
		{"installed", func(t *testing.T, s *Storage) {
			require.NoError(t, s.Save(t.Context(), hs(2, 2, 150), nil, installed(150, 2, "s150"), true))
		}, 150, "s150"},
		{"created after installed", func(t *testing.T, s *Storage) {
			require.NoError(t, s.Save(t.Context(), hs(2, 2, 150), nil, installed(150, 2, "s150"), true))
			require.NoError(t, s.Save(t.Context(), hs(2, 2, 160), ents(151, 160, 2), nil, true))
			require.NoError(t, s.CreateSnapshot(t.Context(), 155, cs, []byte("s155"), 2))
		}, 155, "s155"},
		{"an older creation loses to an install", func(t *testing.T, s *Storage) {
			require.NoError(t, s.Save(t.Context(), hs(2, 2, 150), nil, installed(150, 2, "s150"), true))
			require.NoError(t, s.CreateSnapshot(t.Context(), 60, cs, []byte("s60"), 5))
		}, 150, "s150"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTestStorage(t, dir)
			require.NoError(t, s.Save(t.Context(), hs(1, 1, 100), ents(1, 100, 1), nil, true))
			tt.steps(t, s)
			check := func(s *Storage) {
				t.Helper()
				snap, err := s.Snapshot()
				require.NoError(t, err)
				require.Equal(t, tt.wantIndex, snap.GetMetadata().GetIndex())
				require.Equal(t, tt.wantData, string(snap.GetData()))
			}
			check(s)
			require.NoError(t, s.Close())
			s = openTestStorage(t, dir)
			defer s.Close()
			check(s)
		})
	}
}
