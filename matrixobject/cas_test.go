package matrixobject

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCAS(t *testing.T) {
	s, dir := openTest(t, Options{})
	ctx := t.Context()
	a, b := randBytes(1, 3000), randBytes(2, 5000)
	ra, err := s.PutBlob(ctx, bytes.NewReader(a))
	require.NoError(t, err)
	require.Equal(t, BlobRef{SHA256: sha256hex(a), Size: 3000}, ra)
	ra2, err := s.PutBlob(ctx, bytes.NewReader(a))
	require.NoError(t, err)
	require.Equal(t, ra, ra2, "equal content is stored once")
	rb, err := s.PutBlob(ctx, bytes.NewReader(b))
	require.NoError(t, err)

	n, err := s.BlobRefs(ctx, ra.SHA256)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	n, err = s.IncRef(ctx, rb.SHA256)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	br, err := s.OpenBlob(ctx, ra.SHA256)
	require.NoError(t, err)
	got, err := io.ReadAll(br)
	require.NoError(t, err)
	require.NoError(t, br.Close())
	require.Equal(t, a, got)

	for _, bad := range []string{"", "xyz", sha256hex(a)[:63], "AB" + sha256hex(a)[2:]} {
		_, err := s.OpenBlob(ctx, bad)
		require.ErrorIs(t, err, ErrInvalidArgument, bad)
		_, err = s.IncRef(ctx, bad)
		require.ErrorIs(t, err, ErrInvalidArgument, bad)
	}
	missing := sha256hex([]byte("missing"))
	_, err = s.OpenBlob(ctx, missing)
	require.ErrorIs(t, err, ErrNoSuchBlob)
	_, err = s.IncRef(ctx, missing)
	require.ErrorIs(t, err, ErrNoSuchBlob)

	// Drop a to zero; b keeps two references.
	for range 2 {
		_, err = s.DecRef(ctx, ra.SHA256)
		require.NoError(t, err)
	}
	_, err = s.DecRef(ctx, ra.SHA256)
	require.ErrorIs(t, err, ErrInvalidArgument, "no reference left to drop")

	// Counts are durable: reopen and check before sweeping.
	require.NoError(t, s.Close())
	s, err = Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	n, err = s.BlobRefs(ctx, rb.SHA256)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	dry, err := s.SweepBlobs(ctx, true)
	require.NoError(t, err)
	require.Equal(t, SweepReport{DryRun: true, Blobs: []BlobRef{ra}, Bytes: 3000}, dry)
	_, err = s.OpenBlob(ctx, ra.SHA256)
	require.NoError(t, err, "a dry run removes nothing")

	real, err := s.SweepBlobs(ctx, false)
	require.NoError(t, err)
	require.Equal(t, []BlobRef{ra}, real.Blobs)
	_, err = s.OpenBlob(ctx, ra.SHA256)
	require.ErrorIs(t, err, ErrNoSuchBlob)
	_, err = s.OpenBlob(ctx, rb.SHA256)
	require.NoError(t, err)
	again, err := s.SweepBlobs(ctx, false)
	require.NoError(t, err)
	require.Empty(t, again.Blobs)

	// Putting swept content again brings it back with one reference.
	ra3, err := s.PutBlob(ctx, bytes.NewReader(a))
	require.NoError(t, err)
	require.Equal(t, ra, ra3)
	n, err = s.BlobRefs(ctx, ra.SHA256)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

func TestCASJournalTornTailAndCompaction(t *testing.T) {
	s, dir := openTest(t, Options{})
	ctx := t.Context()
	ref, err := s.PutBlob(ctx, bytes.NewReader([]byte("value")))
	require.NoError(t, err)
	for range 1100 {
		_, err := s.IncRef(ctx, ref.SHA256)
		require.NoError(t, err)
		_, err = s.DecRef(ctx, ref.SHA256)
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	log := filepath.Join(dir, casDir, refsLogName)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("torn record"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s2.Close()
	n, err := s2.BlobRefs(ctx, ref.SHA256)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	st, err := os.Stat(log)
	require.NoError(t, err)
	require.Equal(t, int64(refRecordSize), st.Size(), "the journal was compacted to one record")
	n, err = s2.IncRef(ctx, ref.SHA256)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
}
