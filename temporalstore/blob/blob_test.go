package blob

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func open(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func content(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func digest(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}

func readAll(t *testing.T, s *Store, ns, key string, rng *Range) ([]byte, *Reader) {
	t.Helper()
	r, err := s.Open(t.Context(), ns, key, rng)
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b, r
}

func TestPutOpenSizes(t *testing.T) {
	s := open(t, Options{})
	for _, n := range []int{0, 1, 1<<20 - 1, 1 << 20, 3<<20 + 7} {
		b := content(n, uint64(n))
		info, err := s.Put(t.Context(), "ns", "k", bytes.NewReader(b), digest(b))
		require.NoError(t, err, n)
		require.Equal(t, int64(n), info.Size)
		require.Equal(t, digest(b), info.SHA256)
		got, r := readAll(t, s, "ns", "k", nil)
		require.Equal(t, b, got, n)
		require.Equal(t, int64(n), r.Length)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	s := open(t, Options{MaxSize: 1000})
	ctx := t.Context()
	_, err := s.Put(ctx, "ns", "k", strings.NewReader("old"), "")
	require.NoError(t, err)
	wrong := digest([]byte("something else"))
	for name, put := range map[string]func() error{
		"wrong digest":    func() error { _, err := s.Put(ctx, "ns", "k", strings.NewReader("new"), wrong); return err },
		"bad digest":      func() error { _, err := s.Put(ctx, "ns", "k", strings.NewReader("new"), "xyz"); return err },
		"too large":       func() error { _, err := s.Put(ctx, "ns", "k", bytes.NewReader(make([]byte, 1001)), ""); return err },
		"empty key":       func() error { _, err := s.Put(ctx, "ns", "", strings.NewReader("new"), ""); return err },
		"empty namespace": func() error { _, err := s.Put(ctx, "", "k", strings.NewReader("new"), ""); return err },
		"long key": func() error {
			_, err := s.Put(ctx, "ns", strings.Repeat("k", MaxKey+1), strings.NewReader("x"), "")
			return err
		},
	} {
		err := put()
		require.Error(t, err, name)
		got, _ := readAll(t, s, "ns", "k", nil)
		require.Equal(t, "old", string(got), name)
	}
	_, err = s.Put(ctx, "ns", "k", strings.NewReader("new"), wrong)
	require.ErrorIs(t, err, ErrBadDigest)
	_, err = s.Put(ctx, "ns", "k", bytes.NewReader(make([]byte, 1001)), "")
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = s.Put(ctx, "ns", "", strings.NewReader("x"), "")
	require.ErrorIs(t, err, ErrInvalid)
}

func TestRanges(t *testing.T) {
	s := open(t, Options{})
	b := content(1000, 7)
	_, err := s.Put(t.Context(), "ns", "k", bytes.NewReader(b), "")
	require.NoError(t, err)
	_, err = s.Put(t.Context(), "ns", "empty", bytes.NewReader(nil), "")
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		rng       Range
		off, size int64
	}{
		{"first byte", Range{Start: 0, End: 0}, 0, 1},
		{"last byte", Range{Start: 999, End: 999}, 999, 1},
		{"to the end", Range{Start: 990, End: -1}, 990, 10},
		{"end past the blob", Range{Start: 500, End: 5000}, 500, 500},
		{"suffix", Range{Suffix: 10}, 990, 10},
		{"suffix longer than the blob", Range{Suffix: 5000}, 0, 1000},
	} {
		got, r := readAll(t, s, "ns", "k", &tc.rng)
		require.Equal(t, b[tc.off:tc.off+tc.size], got, tc.name)
		require.Equal(t, tc.off, r.Offset, tc.name)
		require.Equal(t, int64(1000), r.Info.Size, tc.name)
	}
	for name, rng := range map[string]Range{
		"start at the end":   {Start: 1000, End: -1},
		"start past the end": {Start: 5000, End: 6000},
	} {
		_, err := s.Open(t.Context(), "ns", "k", &rng)
		require.ErrorIs(t, err, ErrRange, name)
	}
	_, err = s.Open(t.Context(), "ns", "empty", &Range{Suffix: 1})
	require.ErrorIs(t, err, ErrRange)
	_, err = s.Open(t.Context(), "ns", "missing", nil)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Open(t.Context(), "other", "k", nil)
	require.ErrorIs(t, err, ErrNotFound, "namespaces are apart")
}

func TestMultipart(t *testing.T) {
	s := open(t, Options{})
	ctx := t.Context()
	parts := [][]byte{content(3000, 1), content(10, 2), content(0, 3), content(70000, 4)}
	id, err := s.Begin(ctx, "ns", "up")
	require.NoError(t, err)
	// Out of order, one part sent twice with other content first.
	_, err = s.Append(ctx, "ns", "up", id, 2, bytes.NewReader([]byte("replaced")), "")
	require.NoError(t, err)
	for _, i := range []int{3, 1, 0, 2} {
		p, err := s.Append(ctx, "ns", "up", id, i+1, bytes.NewReader(parts[i]), digest(parts[i]))
		require.NoError(t, err)
		require.Equal(t, i+1, p.Number)
	}
	_, err = s.Append(ctx, "ns", "up", id, 1, bytes.NewReader([]byte("x")), digest([]byte("y")))
	require.ErrorIs(t, err, ErrBadDigest, "a part must match its digest")
	_, err = s.Append(ctx, "ns", "up", id, MaxParts+1, bytes.NewReader(nil), "")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = s.Stat(ctx, "ns", "up")
	require.ErrorIs(t, err, ErrNotFound, "nothing is visible before the commit")

	got, err := s.Parts(ctx, "ns", "up", id)
	require.NoError(t, err)
	require.Len(t, got, 4)
	_, err = s.Commit(ctx, "ns", "up", id, []int{1, 9})
	require.ErrorIs(t, err, ErrNoSuchPart)
	_, err = s.Commit(ctx, "ns", "up", id, []int{1, 1})
	require.ErrorIs(t, err, ErrInvalid)
	info, err := s.Commit(ctx, "ns", "up", id, nil)
	require.NoError(t, err)
	want := bytes.Join(parts, nil)
	require.Equal(t, int64(len(want)), info.Size)
	require.Equal(t, digest(want), info.SHA256)
	b, _ := readAll(t, s, "ns", "up", nil)
	require.Equal(t, want, b)
	_, err = s.Append(ctx, "ns", "up", id, 5, bytes.NewReader(nil), "")
	require.ErrorIs(t, err, ErrNoSuchUpload, "a committed upload is over")

	// A chosen subset of parts, and an abort.
	id, err = s.Begin(ctx, "ns", "sub")
	require.NoError(t, err)
	for i, p := range parts {
		_, err := s.Append(ctx, "ns", "sub", id, i+1, bytes.NewReader(p), "")
		require.NoError(t, err)
	}
	_, err = s.Commit(ctx, "ns", "sub", id, []int{4, 1})
	require.NoError(t, err)
	b, _ = readAll(t, s, "ns", "sub", nil)
	require.Equal(t, append(append([]byte{}, parts[0]...), parts[3]...), b)
	id, err = s.Begin(ctx, "ns", "gone")
	require.NoError(t, err)
	require.NoError(t, s.Abort(ctx, "ns", "gone", id))
	_, err = s.Commit(ctx, "ns", "gone", id, nil)
	require.ErrorIs(t, err, ErrNoSuchUpload)
	_, err = s.Commit(ctx, "ns", "other-key", id, nil)
	require.ErrorIs(t, err, ErrNoSuchUpload)
}

func TestListDeleteSweep(t *testing.T) {
	now := time.Now()
	s := open(t, Options{UploadExpiry: time.Hour, Now: func() time.Time { return now }})
	ctx := t.Context()
	l, err := s.List(ctx, "empty", "", "", 0)
	require.NoError(t, err)
	require.Empty(t, l.Blobs)
	for _, k := range []string{"a/1", "a/2", "a/3", "b/1"} {
		_, err := s.Put(ctx, "ns", k, strings.NewReader(k), "")
		require.NoError(t, err)
	}
	_, err = s.Put(ctx, "other", "a/9", strings.NewReader("x"), "")
	require.NoError(t, err)
	l, err = s.List(ctx, "ns", "a/", "", 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a/1", "a/2"}, keys(l))
	require.Equal(t, "a/2", l.Next)
	l, err = s.List(ctx, "ns", "a/", l.Next, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a/3"}, keys(l))
	require.Empty(t, l.Next)

	require.NoError(t, s.Delete(ctx, "ns", "a/2"))
	require.ErrorIs(t, s.Delete(ctx, "ns", "a/2"), ErrNotFound)
	l, err = s.List(ctx, "ns", "", "", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a/1", "a/3", "b/1"}, keys(l))

	old, err := s.Begin(ctx, "ns", "stale")
	require.NoError(t, err)
	_, err = s.Append(ctx, "ns", "stale", old, 1, strings.NewReader("part"), "")
	require.NoError(t, err)
	now = now.Add(2 * time.Hour)
	fresh, err := s.Begin(ctx, "ns", "fresh")
	require.NoError(t, err)
	rep, err := s.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Uploads)
	_, err = s.Parts(ctx, "ns", "stale", old)
	require.ErrorIs(t, err, ErrNoSuchUpload)
	_, err = s.Parts(ctx, "ns", "fresh", fresh)
	require.NoError(t, err)
}

func keys(l Listing) []string {
	var out []string
	for _, b := range l.Blobs {
		out = append(out, b.Key)
	}
	return out
}

// A blob survives the store's reopening; replacing one keeps readers of
// the old version reading it.
func TestDurableAndReadersKeepTheirVersion(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	ctx := t.Context()
	old := content(5000, 9)
	_, err = s.Put(ctx, "ns", "k", bytes.NewReader(old), "")
	require.NoError(t, err)
	r, err := s.Open(ctx, "ns", "k", nil)
	require.NoError(t, err)
	_, err = s.Put(ctx, "ns", "k", strings.NewReader("new"), "")
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, old, b)
	require.NoError(t, r.Close())
	require.NoError(t, s.Close())

	s, err = Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	got, _ := readAll(t, s, "ns", "k", nil)
	require.Equal(t, "new", string(got))
}
