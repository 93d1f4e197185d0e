package blockfmt

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the committed fuzz seed corpora under testdata/fuzz")

func mustEncode(b Block, opts Options) []byte {
	enc, err := Encode(nil, b, opts)
	if err != nil {
		panic(err)
	}
	return enc
}

// seedBlocks are encodings worth starting FuzzDecode from.
func seedBlocks() [][]byte {
	plain := mustEncode(NewBlock(testStringKey(1, "user:1"), []byte("hello")), Options{})
	zstd := mustEncode(NewBlock(testPageKey(2, 3, 0, 4096), bytes.Repeat([]byte("page "), 200)), zstdOpts)
	ttl := mustEncode(Block{Key: testHashKey(0, "h\x00", "f"), Kind: KindObject, Hotness: 9, ExpiresAt: 1 << 60, Value: []byte{0, 1, 2}}, Options{})
	newer := reseal(bytes.Clone(plain))
	newer[4] = Version + 1
	reseal(newer)
	return [][]byte{
		plain,
		zstd,
		ttl,
		mustEncode(Block{}, Options{}),
		newer,
		plain[:HeaderLen],
		zstd[:len(zstd)-1],
		[]byte("MCBK"),
	}
}

func seedOrderedKeys() [][]byte {
	return [][]byte{
		AppendOrderedKey(nil, testStringKey(1, "user:1")),
		AppendOrderedKey(nil, Key{1, "a\x00", "\x00", "x\x00"}),
		AppendOrderedKey(nil, Key{}),
		ShardPrefix(3),
		{0, 0, 0, 0, 0, 0, 0, 1, 0, 2},
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range seedBlocks() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data)
		h, herr := DecodeHeader(data)
		if err != nil {
			if herr == nil {
				// Only a payload that fails to decompress passes the header.
				require.True(t, h.Compressed)
			}
			return
		}
		require.NoError(t, herr)
		require.Equal(t, b.Key, h.Key)
		require.Len(t, b.Value, h.ValueLen)
		// Whatever decodes must re-encode to a block that decodes the same.
		re, err := Encode(nil, b, Options{Compression: CompressionZstd})
		require.NoError(t, err)
		again, err := Decode(re)
		require.NoError(t, err)
		require.Equal(t, b, again)
	})
}

// FuzzDecodeSealed fixes up the checksum of every input before decoding
// it, so the fuzzer gets past the CRC and explores what a damaged block
// that happens to pass it would do: lengths, flags and zstd payloads. It
// must be rejected or decode to something that re-encodes, and never
// panic or allocate without bound.
func FuzzDecodeSealed(f *testing.F) {
	for _, s := range seedBlocks() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < HeaderLen {
			return
		}
		data = reseal(bytes.Clone(data))
		b, err := Decode(data)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(b.Value), MaxValueLen)
		re, err := Encode(nil, b, Options{})
		require.NoError(t, err)
		again, err := Decode(re)
		require.NoError(t, err)
		require.Equal(t, b, again)
	})
}

func FuzzDecodeOrderedKey(f *testing.F) {
	for _, s := range seedOrderedKeys() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := DecodeOrderedKey(data)
		if err != nil {
			return
		}
		require.Equal(t, data, AppendOrderedKey(nil, k), "decoding is exact")
	})
}

// TestWriteSeedCorpus rewrites testdata/fuzz from the seeds above when run
// with -write-corpus, and otherwise checks that the committed corpus exists.
func TestWriteSeedCorpus(t *testing.T) {
	for name, seeds := range map[string][][]byte{
		"FuzzDecode":           seedBlocks(),
		"FuzzDecodeSealed":     seedBlocks(),
		"FuzzDecodeOrderedKey": seedOrderedKeys(),
	} {
		dir := filepath.Join("testdata", "fuzz", name)
		if !*writeCorpus {
			entries, err := os.ReadDir(dir)
			require.NoError(t, err, "run with -write-corpus to create the seed corpus")
			require.GreaterOrEqual(t, len(entries), len(seeds))
			continue
		}
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for i, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644))
		}
	}
}
