package matrixobject

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the committed fuzz seed corpora under testdata/fuzz")

// addSeeds adds byte-slice seeds to f and, with -write-corpus, writes them
// as the committed corpus of the target.
func addSeeds(f *testing.F, seeds ...[]byte) {
	f.Helper()
	for _, s := range seeds {
		f.Add(s)
	}
	if !*writeCorpus {
		return
	}
	dir := filepath.Join("testdata", "fuzz", f.Name())
	require.NoError(f, os.RemoveAll(dir))
	require.NoError(f, os.MkdirAll(dir, 0o755))
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		require.NoError(f, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644))
	}
}

func objectFileImage(data string, m *objectMeta) []byte {
	tr, err := encodeTrailer(m)
	if err != nil {
		panic(err)
	}
	return append([]byte(data), tr...)
}

func writeTempFile(t *testing.T, b []byte) *os.File {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// FuzzReadMeta feeds arbitrary bytes to the object-file trailer reader: it
// must return an error or metadata consistent with the file, never panic.
func FuzzReadMeta(f *testing.F) {
	good := objectFileImage("hello", &objectMeta{Key: "k", Size: 5, ETag: "x", ModTime: time.Unix(1, 0).UTC()})
	badSize := objectFileImage("hello", &objectMeta{Key: "k", Size: 4})
	flipped := append([]byte(nil), good...)
	flipped[7] ^= 1
	addSeeds(f, good, badSize, flipped, good[:len(good)-1], []byte(objectMagic), make([]byte, footerSize), nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readMeta(writeTempFile(t, b))
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, m.Size, int64(0))
		require.LessOrEqual(t, m.Size, int64(len(b)-footerSize))
	})
}

func appendImage(key string, frames ...string) []byte {
	b := encodeAppendHeader(key)
	for _, fr := range frames {
		var h [frameHeader]byte
		binary.LittleEndian.PutUint32(h[0:4], uint32(len(fr)))
		binary.LittleEndian.PutUint32(h[4:8], crc32.Checksum([]byte(fr), castagnoli))
		b = append(b, h[:]...)
		b = append(b, fr...)
	}
	return b
}

// FuzzScanAppendBlob feeds arbitrary bytes to the append-blob scanner: it
// must fail or return extents that tile the blob inside the file.
func FuzzScanAppendBlob(f *testing.F) {
	good := appendImage("seg", "hello ", "world")
	torn := good[:len(good)-2]
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 1
	addSeeds(f, good, torn, badCRC, appendImage("k"), good[:10], []byte("MXAPNDv1"+strings.Repeat("\xff", 8)), nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		ab, err := scanAppendBlob(writeTempFile(t, b))
		if err != nil {
			return
		}
		st := ab.state.Load()
		require.LessOrEqual(t, ab.end, int64(len(b)))
		var off int64
		for _, e := range st.extents {
			require.Equal(t, off, e.off)
			require.Positive(t, e.size)
			require.LessOrEqual(t, e.pos+e.size, ab.end)
			off += e.size
		}
		require.Equal(t, off, st.size)
	})
}

func TestScanAppendBlobCutsTornTail(t *testing.T) {
	good := appendImage("seg", "hello ", "world")
	for _, tc := range []struct {
		name string
		b    []byte
		size int64
	}{
		{"whole", good, 11},
		{"torn data", good[:len(good)-2], 6},
		{"torn header", good[:len(good)-5-6], 6},
		{"bad last crc", append(append([]byte(nil), good[:len(good)-1]...), 'X'), 6},
		{"no frames", appendImage("seg"), 0},
	} {
		ab, err := scanAppendBlob(writeTempFile(t, tc.b))
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.size, ab.state.Load().size, tc.name)
	}
	_, err := scanAppendBlob(writeTempFile(t, []byte("not an append blob")))
	require.ErrorIs(t, err, ErrCorrupt)
}
