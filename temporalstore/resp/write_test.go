package resp

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Whatever room the buffer has, a reply's bytes are the same: appended in
// one piece when it fits, flushed first when it would fit an empty
// buffer, written piece by piece when it would not.
func TestWriterAtBufferBoundaries(t *testing.T) {
	for _, size := range []int{16, 40, 64, 4096} {
		for _, fill := range []int{0, 1, size / 2, size - 1} {
			for _, vlen := range []int{0, 5, size - 10, size, 3 * size} {
				t.Run(fmt.Sprintf("buf%d/fill%d/v%d", size, fill, vlen), func(t *testing.T) {
					var out bytes.Buffer
					w := writer{bw: bufio.NewWriterSize(&out, size)}
					w.bw.WriteString(strings.Repeat(".", fill))
					v := bytes.Repeat([]byte("v"), vlen)
					w.header('*', -12345678901234)
					w.bulk(v)
					w.pair(1764460800000, v)
					w.int(7)
					require.NoError(t, w.bw.Flush())
					want := strings.Repeat(".", fill) +
						"*-12345678901234\r\n" +
						fmt.Sprintf("$%d\r\n%s\r\n", vlen, v) +
						fmt.Sprintf("*2\r\n:1764460800000\r\n$%d\r\n%s\r\n", vlen, v) +
						":7\r\n"
					require.Equal(t, want, out.String())
				})
			}
		}
	}
}
