package matrixobject

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// bodyKinds are the ways a body reaches copyHashed: the two in-memory
// readers it writes in place, and readers it must read chunk by chunk.
var bodyKinds = []struct {
	name     string
	inMemory bool
	reader   func([]byte) io.Reader
}{
	{"bytes.Reader", true, func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"bytes.Buffer", true, func(b []byte) io.Reader { return bytes.NewBuffer(b) }},
	{"plain reader", false, func(b []byte) io.Reader { return struct{ io.Reader }{bytes.NewReader(b)} }},
	{"half reader", false, func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
}

func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "body"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCopyHashed(t *testing.T) {
	s, _ := openTest(t, Options{})
	sizes := []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, writeStep + 3, 2*flushEvery + chunkSize/2}
	for _, size := range sizes {
		data := fastRandBytes(uint64(size), size)
		for _, kind := range bodyKinds {
			t.Run(fmt.Sprintf("%d/%s", size, kind.name), func(t *testing.T) {
				f := tempFile(t)
				md, sh := md5.New(), sha256.New()
				n, err := s.copyHashed(t.Context(), f, kind.reader(data), int64(size), md, sh)
				require.NoError(t, err)
				require.Equal(t, int64(size), n)
				require.Equal(t, md5hex(data), hex.EncodeToString(md.Sum(nil)))
				require.Equal(t, sha256hex(data), hex.EncodeToString(sh.Sum(nil)))
				got, err := os.ReadFile(f.Name())
				require.NoError(t, err)
				require.True(t, bytes.Equal(data, got), "file holds the body")
			})
		}
	}
}

func TestCopyHashedFailures(t *testing.T) {
	s, _ := openTest(t, Options{})
	size := 2*writeStep + 5
	data := fastRandBytes(9, size)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, kind := range bodyKinds {
		for _, tc := range []struct {
			name     string
			ctx      context.Context
			limit    int64
			readOnly bool
			want     error
		}{
			{"over the limit", t.Context(), int64(size - 1), false, ErrTooLarge},
			{"cancelled", cancelled, int64(size), false, context.Canceled},
			{"write fails", t.Context(), int64(size), true, os.ErrClosed},
		} {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				f := tempFile(t)
				if tc.readOnly {
					require.NoError(t, f.Close())
				}
				start := time.Now()
				_, err := s.copyHashed(tc.ctx, f, kind.reader(data), tc.limit, md5.New(), sha256.New())
				require.ErrorIs(t, err, tc.want)
				require.Less(t, time.Since(start), 5*time.Second, "a failed copy stops promptly")
				if kind.inMemory && tc.name == "over the limit" {
					fi, err := os.Stat(f.Name())
					require.NoError(t, err)
					require.Zero(t, fi.Size(), "an in-memory body over the limit is refused before it is written")
				}
			})
		}
	}
}

func TestFlusher(t *testing.T) {
	for _, tc := range []struct {
		name string
		// notes are the (written, complete) pairs given to the flusher in
		// turn; after each, flushed must reach the matching want.
		notes []note
	}{
		{"below the threshold", []note{{written: flushEvery - 1, want: 0}}},
		{"at the threshold", []note{{written: flushEvery, want: flushEvery}}},
		{"tail when complete", []note{
			{written: flushEvery, want: flushEvery},
			{written: flushEvery + 10, want: flushEvery},
			{written: flushEvery + 10, complete: true, want: flushEvery + 10},
		}},
		{"small complete body", []note{{written: 10, complete: true, want: 10}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tempFile(t)
			fl := startFlusher(f)
			for _, n := range tc.notes {
				_, err := f.Write(make([]byte, n.written-fl.written.Load()))
				require.NoError(t, err)
				fl.note(n.written, n.complete)
				require.Eventually(t, func() bool { return fl.flushed.Load() == n.want }, 5*time.Second, time.Millisecond)
			}
			require.NoError(t, fl.stop())
			require.Equal(t, tc.notes[len(tc.notes)-1].want, fl.flushed.Load())
		})
	}
	t.Run("error reaches stop", func(t *testing.T) {
		f := tempFile(t)
		fl := startFlusher(f)
		require.NoError(t, f.Close())
		fl.note(flushEvery, false)
		select {
		case <-fl.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the flusher did not give up after a failed flush")
		}
		require.Error(t, fl.stop())
	})
}

// fastRandBytes returns n incompressible bytes; it is quicker than
// randBytes for the multi-MiB bodies of these tests under the race detector.
func fastRandBytes(seed uint64, n int) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

type note struct {
	written  int64
	complete bool
	want     int64
}
