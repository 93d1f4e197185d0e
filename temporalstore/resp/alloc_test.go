package resp

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Commands are not copied to the heap on their way to the engine: over a
// connection, each call of these verbs allocates, in the whole process and
// the engine's own work included, less than a Command (896 bytes in its
// size class) above what it allocated when this was written (set 313,
// hsetandgetopt 112, fappend 676, fquery 96, hset 531 bytes).
func TestHotVerbsAllocate(t *testing.T) {
	addr, _ := start(t, Options{})
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	br := bufio.NewReader(nc)
	call := func(req []byte) {
		_, err := nc.Write(req)
		require.NoError(t, err)
		line, err := br.ReadSlice('\n')
		require.NoError(t, err)
		require.NotEqual(t, byte('-'), line[0], string(line))
		if line[0] == '*' { // FQUERY: [ts, value] pairs
			var n int
			_, err = fmt.Sscanf(string(line), "*%d\r\n", &n)
			require.NoError(t, err)
			for range 4 * n { // each pair: *2, :ts, $len, value
				_, err = br.ReadSlice('\n')
				require.NoError(t, err)
			}
		}
	}
	encode := func(args ...string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		return []byte(b.String())
	}
	for _, tc := range []struct {
		name string
		req  []byte
		max  uint64 // bytes a call
	}{
		{"set", encode("SET", "k", "0123456789abcdef"), 700},
		{"hsetandgetopt", encode("HSETANDGETOPT", "e", "1000", "1", "0", "1000", "sum", "60000", "3600000", ""), 500},
		{"fappend", encode("FAPPEND", "f", "1000", "v"), 1100},
		{"fquery", encode("FQUERY", "f", "0", "2000"), 500},
		{"hset", encode("HSET", "h", "f", "v"), 1000}, // through intReply, by value
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 100 {
				call(tc.req)
			}
			const n = 2000
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				call(tc.req)
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / n
			t.Logf("%s: %d bytes a call", tc.name, per)
			require.Less(t, per, tc.max)
		})
	}
}
