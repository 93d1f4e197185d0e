package blobbench

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
)

// stride is how far apart consecutive items start in a corpus: odd, so no
// page-aligned block of one item recurs page-aligned in another and a
// deduplicating store or filesystem finds nothing to share.
const stride = 4099

// corpus is n distinct, incompressible items of size bytes each, cut from
// one PCG stream at offsets stride apart: it holds size + (n-1)·stride
// bytes rather than n·size, and every item has its own SHA-256.
type corpus struct {
	buf  []byte
	size int
	sums []string
}

func newCorpus(seed uint64, size, n int) *corpus {
	rng := rand.NewPCG(seed, uint64(size))
	buf := make([]byte, size+(n-1)*stride+8)
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
	}
	c := &corpus{buf: buf[:len(buf)-8], size: size, sums: make([]string, n)}
	for i := range c.sums {
		s := sha256.Sum256(c.item(i))
		c.sums[i] = hex.EncodeToString(s[:])
	}
	return c
}

func (c *corpus) len() int { return len(c.sums) }

func (c *corpus) item(i int) []byte { return c.buf[i*stride : i*stride+c.size] }

// bytes is the content of one pass over every item.
func (c *corpus) bytes() int64 { return int64(c.size) * int64(c.len()) }

// errMismatch is a read whose bytes are not the item's: the benchmark
// stops rather than report a figure for wrong content.
var errMismatch = errors.New("content read back differs from what was written")

// matcher is an io.Writer that checks the bytes written to it, in order,
// against want; comparing costs a memcmp, far below the transfer itself.
type matcher struct {
	want []byte
	off  int
}

func (m *matcher) Write(p []byte) (int, error) {
	if len(p) > len(m.want)-m.off || !bytes.Equal(p, m.want[m.off:m.off+len(p)]) {
		return 0, fmt.Errorf("%w (at byte %d)", errMismatch, m.off)
	}
	m.off += len(p)
	return len(p), nil
}

// readCheck reads r to its end through buf and checks that it held
// exactly want.
func readCheck(r io.Reader, want, buf []byte) error {
	m := &matcher{want: want}
	// The plain Reader keeps io.CopyBuffer on buf (an *os.File would
	// take its own WriteTo path).
	if _, err := io.CopyBuffer(m, struct{ io.Reader }{r}, buf); err != nil {
		return err
	}
	if m.off != len(want) {
		return fmt.Errorf("%w: %d bytes, want %d", errMismatch, m.off, len(want))
	}
	return nil
}
