package respcompat

import (
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/tools/pyvenv"
)

// redisPyVersion is the redis-py release the test installs from PyPI.
const redisPyVersion = "8.1.0"

func startServer(t *testing.T, opts resp.Options) string {
	e, err := temporalstore.Open(t.Context(), temporalstore.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	opts.Engine = e
	s, err := resp.New(opts)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(l)
	t.Cleanup(func() {
		s.Close()
		e.Close()
	})
	return l.Addr().String()
}

// TestRedisPy runs the redis-py script in RESP2 and RESP3, with and
// without a password.
func TestRedisPy(t *testing.T) {
	py := pyvenv.Python(t, "redispy", "redis=="+redisPyVersion)
	for _, tc := range []struct {
		name     string
		opts     resp.Options
		password string
	}{
		{"open", resp.Options{}, ""},
		{"auth", resp.Options{Tokens: []string{"s3cret"}}, "s3cret"},
	} {
		addr := startServer(t, tc.opts)
		host, port, _ := net.SplitHostPort(addr)
		for _, proto := range []string{"2", "3"} {
			t.Run(fmt.Sprint(tc.name, "/resp", proto), func(t *testing.T) {
				args := []string{"testdata/redispy_check.py", host, port, proto}
				if tc.password != "" {
					args = append(args, tc.password)
				}
				out, err := exec.CommandContext(t.Context(), py, args...).CombinedOutput()
				require.NoError(t, err, string(out))
				require.True(t, strings.HasSuffix(strings.TrimSpace(string(out)), "redis-py ok"), string(out))
			})
		}
	}
}
