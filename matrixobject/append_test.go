package matrixobject

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendBlob(t *testing.T) {
	s, dir := openTest(t, Options{MaxAppendSize: 1 << 16})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "logs", Quota{}))

	_, err := s.AppendBlobSize(ctx, "logs", "seg")
	require.ErrorIs(t, err, ErrNoSuchKey)
	r, err := s.AppendAt(ctx, "logs", "seg", 0, []byte("hello "))
	require.NoError(t, err)
	require.Equal(t, AppendResult{Offset: 0, Size: 6}, r)
	_, err = s.AppendAt(ctx, "logs", "seg", 0, []byte("again"))
	require.ErrorIs(t, err, ErrOffsetMismatch)
	r, err = s.AppendAt(ctx, "logs", "seg", 6, []byte("world"))
	require.NoError(t, err)
	require.Equal(t, AppendResult{Offset: 6, Size: 11}, r)
	r, err = s.Append(ctx, "logs", "seg", []byte("!"))
	require.NoError(t, err)
	require.Equal(t, int64(12), r.Size)

	for _, tc := range []struct {
		off  int64
		n    int
		want string
		err  error
	}{
		{0, 12, "hello world!", nil},
		{0, 20, "hello world!", io.EOF},
		{4, 4, "o wo", nil}, // spans two appends
		{11, 1, "!", nil},
		{12, 1, "", io.EOF},
		{-1, 1, "", ErrInvalidArgument},
	} {
		p := make([]byte, tc.n)
		n, err := s.ReadAppendBlob(ctx, "logs", "seg", tc.off, p)
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err)
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, tc.want, string(p[:n]))
	}

	_, err = s.Append(ctx, "logs", "big", make([]byte, 1<<16+1))
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = s.Append(ctx, "logs", "../x", []byte("x"))
	require.ErrorIs(t, err, ErrInvalidKey)
	_, err = s.Append(ctx, "nolog", "x", []byte("x"))
	require.ErrorIs(t, err, ErrNoSuchBucket)
	_, err = s.AppendAt(ctx, "logs", "seg", -1, []byte("x"))
	require.ErrorIs(t, err, ErrInvalidArgument)

	// Reopen: the blob is all there; a torn tail frame is cut.
	require.NoError(t, s.Close())
	path := filepath.Join(dir, bucketsDir, "logs", appendDir, fileName("seg"))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	var hdr [frameHeader]byte
	binary.LittleEndian.PutUint32(hdr[0:4], 100)
	_, err = f.Write(append(hdr[:], "partial"...))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s2.Close()
	size, err := s2.AppendBlobSize(ctx, "logs", "seg")
	require.NoError(t, err)
	require.Equal(t, int64(12), size)
	r, err = s2.Append(ctx, "logs", "seg", []byte("?"))
	require.NoError(t, err)
	require.Equal(t, int64(13), r.Size)
	p := make([]byte, 13)
	_, err = s2.ReadAppendBlob(ctx, "logs", "seg", 0, p)
	require.NoError(t, err)
	require.Equal(t, "hello world!?", string(p))

	require.ErrorIs(t, s2.DeleteBucket(ctx, "logs"), ErrBucketNotEmpty)
	require.NoError(t, s2.DeleteAppendBlob(ctx, "logs", "seg"))
	require.ErrorIs(t, s2.DeleteAppendBlob(ctx, "logs", "seg"), ErrNoSuchKey)
	require.NoError(t, s2.DeleteBucket(ctx, "logs"))
}

// TestAppendConcurrent runs appenders and readers together: every append
// lands whole, and every read sees a prefix made of whole appends.
func TestAppendConcurrent(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "logs", Quota{}))
	const writers, each, recLen = 4, 25, 32
	record := func(w, i int) []byte {
		return bytes.Repeat([]byte{byte('a' + w), byte('0' + i%10)}, recLen/2)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := s.Append(ctx, "logs", "shared", record(w, i))
				require.NoError(t, err)
			}
		})
	}
	var readerWG sync.WaitGroup
	readerWG.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			size, err := s.AppendBlobSize(ctx, "logs", "shared")
			if err != nil {
				continue // not created yet
			}
			require.Zero(t, size%recLen, "a reader sees whole appends only")
			if size == 0 {
				continue
			}
			p := make([]byte, size)
			_, err = s.ReadAppendBlob(ctx, "logs", "shared", 0, p)
			require.NoError(t, err)
			for off := 0; off < len(p); off += recLen {
				require.Equal(t, p[off], p[off+recLen-2])
			}
		}
	})
	wg.Wait()
	close(done)
	readerWG.Wait()
	size, err := s.AppendBlobSize(ctx, "logs", "shared")
	require.NoError(t, err)
	require.Equal(t, int64(writers*each*recLen), size)
}
