package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// config is a program's configuration for the tests.
type config struct {
	addr   string
	n      int
	on     bool
	tokens []string
	log    Log
}

func logOf(c *config) *Log { return &c.log }

var testFlags = []Flag[config]{
	{Name: "addr", Env: "T_ADDR", Default: "127.0.0.1:1", Usage: "listen address", Set: func(c *config, v string) error {
		c.addr = v
		return nil
	}},
	{Name: "n", Env: "T_N", Default: "1", Usage: "a count", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 1 {
			err = errors.New("must be at least 1")
		}
		c.n = n
		return err
	}},
	{Name: "on", Env: "T_ON", Default: "false", Usage: "a switch", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.on = b
		return err
	}},
	{Name: "token", Env: "T_TOKEN", Default: "", Usage: "tokens", Set: func(c *config, v string) error {
		c.tokens = List(v)
		return nil
	}},
	LogLevelFlag("T_LOG_LEVEL", logOf),
	LogFormatFlag("T_LOG_FORMAT", logOf),
}

func usage(w io.Writer) {
	io.WriteString(w, "Usage: t [flags]\n\nFlags:\n")
	PrintFlags(w, testFlags)
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want config
		err  string
	}{
		{name: "defaults", want: config{addr: "127.0.0.1:1", n: 1}},
		{name: "env beats default", env: map[string]string{"T_N": "2", "T_ON": "true", "T_TOKEN": "a, b,", "T_LOG_LEVEL": "debug", "T_LOG_FORMAT": "json"},
			want: config{addr: "127.0.0.1:1", n: 2, on: true, tokens: []string{"a", "b"}, log: Log{Level: slog.LevelDebug, JSON: true}}},
		{name: "blank env is unset", env: map[string]string{"T_ADDR": " ", "T_N": ""}, want: config{addr: "127.0.0.1:1", n: 1}},
		{name: "flag beats env", args: []string{"--n", "3", "--addr", "", "--on=false"}, env: map[string]string{"T_N": "2", "T_ON": "true", "T_ADDR": "x:1"},
			want: config{n: 3}},
		{name: "switch alone", args: []string{"--on", "--n", "4"}, want: config{addr: "127.0.0.1:1", n: 4, on: true}},
		{name: "single dash", args: []string{"-on"}, want: config{addr: "127.0.0.1:1", n: 1, on: true}},
		{name: "bad flag value", args: []string{"--n", "0"}, err: "n (from --n): must be at least 1"},
		{name: "bad env value", env: map[string]string{"T_N": "x"}, err: `n (from T_N): strconv.Atoi: parsing "x"`},
		{name: "bad switch", args: []string{"--on=maybe"}, err: "on (from --on)"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, err: "log-level (from --log-level)"},
		{name: "bad log format", env: map[string]string{"T_LOG_FORMAT": "xml"}, err: `log-format (from T_LOG_FORMAT): log format "xml" (text or json)`},
		{name: "extra arguments", args: []string{"--n", "2", "more"}, err: `unexpected arguments ["more"] (see --help)`},
		{name: "unknown flag", args: []string{"--nope"}, err: "flag provided but not defined: -nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c, err := Parse("t", testFlags, usage, tc.args, &out, func(k string) string { return tc.env[k] })
			require.Empty(t, out.String(), "only --help writes")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, c)
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--n", "2", "--help"}} {
		var out bytes.Buffer
		_, err := Parse("t", testFlags, usage, args, &out, func(string) string { return "" })
		require.ErrorIs(t, err, flag.ErrHelp, "%q", args)
		require.Equal(t, `Usage: t [flags]

Flags:
  --addr  [T_ADDR, default "127.0.0.1:1"]
      listen address
  --n  [T_N, default "1"]
      a count
  --on  [T_ON, default "false"]
      a switch
  --token  [T_TOKEN, default ""]
      tokens
  --log-level  [T_LOG_LEVEL, default "info"]
      log level: debug, info, warn or error
  --log-format  [T_LOG_FORMAT, default "text"]
      log format: text or json
`, out.String(), "%q", args)
	}
}

func TestBoolean(t *testing.T) {
	for _, tc := range []struct {
		def  string
		want bool
	}{{"false", true}, {"true", true}, {"", false}, {"0", false}, {"info", false}} {
		require.Equal(t, tc.want, Flag[config]{Default: tc.def}.Boolean(), tc.def)
	}
}

func TestLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:6379", true},
		{"127.1.2.3:0", true},
		{"[::1]:6379", true},
		{"localhost:6379", true},
		{"0.0.0.0:6379", false},
		{":6379", false},
		{"[::]:6379", false},
		{"10.0.0.1:6379", false},
		{"example.com:6379", false},
		{"127.0.0.1", false},
		{"", false},
	} {
		require.Equal(t, tc.want, Loopback(tc.addr), tc.addr)
	}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"a", []string{"a"}},
		{"a, b ,c,", []string{"a", "b", "c"}},
		{"a:b,c:d", []string{"a:b", "c:d"}},
	} {
		require.Equal(t, tc.want, List(tc.in), tc.in)
	}
}

func TestLogger(t *testing.T) {
	for _, tc := range []struct {
		log  Log
		want string
	}{
		{Log{}, "level=INFO msg=hello k=v\n"},
		{Log{JSON: true}, `"level":"INFO","msg":"hello","k":"v"}` + "\n"},
		{Log{Level: slog.LevelWarn}, ""},
	} {
		var out bytes.Buffer
		l := tc.log.Logger(&out)
		l.Debug("quiet")
		l.Info("hello", "k", "v")
		if tc.want == "" {
			require.Empty(t, out.String())
			continue
		}
		require.Contains(t, out.String(), tc.want)
		require.NotContains(t, out.String(), "quiet")
	}
}
