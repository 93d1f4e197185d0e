package matrixobject

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// s3MultipartETag is S3's rule, computed independently of the store.
func s3MultipartETag(parts ...[]byte) string {
	var cat []byte
	for _, p := range parts {
		s := md5.Sum(p)
		cat = append(cat, s[:]...)
	}
	s := md5.Sum(cat)
	return fmt.Sprintf("%s-%d", hex.EncodeToString(s[:]), len(parts))
}

func TestMultipart(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, dir := openTest(t, Options{MinPartSize: 1024, Now: clock.Now})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{}))
	p1, p2, p3 := randBytes(1, 2048), randBytes(2, 1024), randBytes(3, 10)

	id, err := s.CreateMultipartUpload(ctx, "bkt", "big", PutOptions{ContentType: "video/mp4", Metadata: map[string]string{"x": "y"}})
	require.NoError(t, err)
	var infos []PartInfo
	for i, p := range [][]byte{p1, []byte("replaced below"), p3} {
		pi, err := s.UploadPart(ctx, "bkt", "big", id, i+1, bytes.NewReader(p), PutOptions{})
		require.NoError(t, err)
		require.Equal(t, md5hex(p), pi.ETag)
		infos = append(infos, pi)
	}
	pi, err := s.UploadPart(ctx, "bkt", "big", id, 2, bytes.NewReader(p2), PutOptions{})
	require.NoError(t, err)
	infos[1] = pi
	p4, err := s.UploadPart(ctx, "bkt", "big", id, 4, bytes.NewReader(p1), PutOptions{})
	require.NoError(t, err)
	listed, err := s.ListParts(ctx, "bkt", "big", id)
	require.NoError(t, err)
	require.Len(t, listed, 4)
	require.Equal(t, int64(1024), listed[1].Size)

	quoted := func(i int) string { return `"` + infos[i].ETag + `"` }
	for _, tc := range []struct {
		name  string
		parts []CompletedPart
		want  error
	}{
		{"no parts", nil, ErrInvalidPart},
		{"wrong order", []CompletedPart{{2, infos[1].ETag}, {1, infos[0].ETag}}, ErrInvalidPartOrder},
		{"duplicate", []CompletedPart{{1, infos[0].ETag}, {1, infos[0].ETag}}, ErrInvalidPartOrder},
		{"wrong etag", []CompletedPart{{1, infos[0].ETag}, {2, infos[0].ETag}}, ErrInvalidPart},
		{"missing part", []CompletedPart{{1, infos[0].ETag}, {6, infos[0].ETag}}, ErrInvalidPart},
		{"missing part after a small one", []CompletedPart{{1, infos[0].ETag}, {3, infos[2].ETag}, {5, infos[2].ETag}}, ErrInvalidPart},
		{"small non-last part", []CompletedPart{{1, infos[0].ETag}, {3, infos[2].ETag}, {4, p4.ETag}}, ErrTooSmall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CompleteMultipartUpload(ctx, "bkt", "big", id, tc.parts)
			require.ErrorIs(t, err, tc.want)
			_, err = s.HeadObject(ctx, "bkt", "big")
			require.ErrorIs(t, err, ErrNoSuchKey, "a failed complete writes nothing")
		})
	}
	_, err = s.CompleteMultipartUpload(ctx, "bkt", "other", id, []CompletedPart{{1, infos[0].ETag}})
	require.ErrorIs(t, err, ErrNoSuchUpload, "the upload belongs to another key")

	info, err := s.CompleteMultipartUpload(ctx, "bkt", "big", id, []CompletedPart{{1, quoted(0)}, {2, quoted(1)}, {3, quoted(2)}})
	require.NoError(t, err)
	whole := append(append(append([]byte(nil), p1...), p2...), p3...)
	require.Equal(t, s3MultipartETag(p1, p2, p3), info.ETag)
	require.Equal(t, sha256hex(whole), info.SHA256)
	require.Equal(t, 3, info.Parts)
	got, gi := readAll(t, s, "bkt", "big", &Range{Start: 2040, End: 2050})
	require.Equal(t, whole[2040:2051], got)
	require.Equal(t, "video/mp4", gi.ContentType)
	require.Equal(t, map[string]string{"x": "y"}, gi.Metadata)

	_, err = s.CompleteMultipartUpload(ctx, "bkt", "big", id, []CompletedPart{{1, infos[0].ETag}})
	require.ErrorIs(t, err, ErrNoSuchUpload, "a completed upload is gone")
	_, err = s.UploadPart(ctx, "bkt", "big", id, 1, bytes.NewReader(p1), PutOptions{})
	require.ErrorIs(t, err, ErrNoSuchUpload)

	// Subset of parts: 1 and 3 only.
	id2, err := s.CreateMultipartUpload(ctx, "bkt", "sub", PutOptions{})
	require.NoError(t, err)
	for i, p := range [][]byte{p1, p2, p3} {
		_, err := s.UploadPart(ctx, "bkt", "sub", id2, i+1, bytes.NewReader(p), PutOptions{})
		require.NoError(t, err)
	}
	info, err = s.CompleteMultipartUpload(ctx, "bkt", "sub", id2, []CompletedPart{{1, md5hex(p1)}, {3, md5hex(p3)}})
	require.NoError(t, err)
	require.Equal(t, s3MultipartETag(p1, p3), info.ETag)

	// Abort.
	id3, err := s.CreateMultipartUpload(ctx, "bkt", "gone", PutOptions{})
	require.NoError(t, err)
	_, err = s.UploadPart(ctx, "bkt", "gone", id3, 1, bytes.NewReader(p1), PutOptions{})
	require.NoError(t, err)
	require.NoError(t, s.AbortMultipartUpload(ctx, "bkt", "gone", id3))
	require.ErrorIs(t, s.AbortMultipartUpload(ctx, "bkt", "gone", id3), ErrNoSuchUpload)
	require.ErrorIs(t, s.AbortMultipartUpload(ctx, "bkt", "gone", "../../etc"), ErrNoSuchUpload)

	// Bad part numbers.
	id4, err := s.CreateMultipartUpload(ctx, "bkt", "k4", PutOptions{})
	require.NoError(t, err)
	for _, n := range []int{0, -1, DefaultMaxParts + 1} {
		_, err := s.UploadPart(ctx, "bkt", "k4", id4, n, bytes.NewReader(p1), PutOptions{})
		require.ErrorIs(t, err, ErrInvalidArgument)
	}

	// Sweep removes uploads older than the expiry, by the injected clock.
	clock.Advance(DefaultUploadExpiry / 2)
	id5, err := s.CreateMultipartUpload(ctx, "bkt", "k5", PutOptions{})
	require.NoError(t, err)
	n, err := s.SweepUploads(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	clock.Advance(DefaultUploadExpiry/2 + time.Second)
	n, err = s.SweepUploads(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the older upload has expired")
	ups, err := s.ListUploads(ctx, "bkt")
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.Equal(t, id5, ups[0].UploadID)
	_, err = s.UploadPart(ctx, "bkt", "k4", id4, 1, bytes.NewReader(p1), PutOptions{})
	require.ErrorIs(t, err, ErrNoSuchUpload)

	ents, err := os.ReadDir(filepath.Join(dir, tmpDir))
	require.NoError(t, err)
	require.Empty(t, ents)
}

func TestMultipartQuotaKeepsOldObject(t *testing.T) {
	s, _ := openTest(t, Options{MinPartSize: 1})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{MaxBytes: 100}))
	_, err := s.PutObject(ctx, "bkt", "k", bytes.NewReader([]byte("old")), PutOptions{})
	require.NoError(t, err)
	id, err := s.CreateMultipartUpload(ctx, "bkt", "k", PutOptions{})
	require.NoError(t, err)
	pi, err := s.UploadPart(ctx, "bkt", "k", id, 1, bytes.NewReader(randBytes(1, 200)), PutOptions{})
	require.NoError(t, err)
	_, err = s.CompleteMultipartUpload(ctx, "bkt", "k", id, []CompletedPart{{1, pi.ETag}})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	got, _ := readAll(t, s, "bkt", "k", nil)
	require.Equal(t, "old", string(got))
}
