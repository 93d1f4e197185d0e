package memory

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
)

func TestParseExpiration(t *testing.T) {
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true},
		{"  ", 0, true},
		{"2026-03-04", day.AddDate(0, 0, 1).UnixMilli(), true},
		{"2026-03-04T10:00:00Z", day.Add(10 * time.Hour).UnixMilli(), true},
		{"2026-03-04T10:00:00+02:00", day.Add(8 * time.Hour).UnixMilli(), true},
		{"2026-03-04T10:00:00.5", day.Add(10*time.Hour + 500*time.Millisecond).UnixMilli(), true},
		{"2026-13-04", 0, false},
		{"tomorrow", 0, false},
	} {
		got, err := parseExpiration(c.in)
		if !c.ok {
			require.ErrorIs(t, err, matrixark.ErrInvalid, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}

func FuzzParseExpiration(f *testing.F) {
	for _, s := range []string{"", "2026-03-04", "2026-03-04T10:00:00Z", "2026-03-04T10:00:00", "x", "9999-12-31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := parseExpiration(s)
		if err != nil {
			if !errors.Is(err, matrixark.ErrInvalid) {
				t.Fatalf("%q: %v is not ErrInvalid", s, err)
			}
			return
		}
		if strings.TrimSpace(s) == "" && ms != 0 {
			t.Fatalf("%q: blank expires at %d", s, ms)
		}
	})
}

func FuzzScope(f *testing.F) {
	for _, s := range [][3]string{{"alice", "", ""}, {" a ", "b", "c"}, {"a b", "", ""}, {"", "", " "}, {"a:b", "", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, u, a, r string) {
		sc, err := Scope{UserID: u, AgentID: a, RunID: r}.normalize()
		if err != nil {
			if !errors.Is(err, matrixark.ErrInvalid) {
				t.Fatalf("%v is not ErrInvalid", err)
			}
			return
		}
		for _, id := range []string{sc.UserID, sc.AgentID, sc.RunID} {
			if strings.ContainsFunc(id, unicode.IsSpace) || strings.ContainsRune(id, ':') || len(id) > matrixark.MaxNameBytes {
				t.Fatalf("accepted id %q", id)
			}
		}
		if (u == "") != (sc.UserID == "") || (a == "") != (sc.AgentID == "") || (r == "") != (sc.RunID == "") {
			t.Fatalf("an id appeared or vanished: %q %q %q → %+v", u, a, r, sc)
		}
	})
}

func TestUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, err := newUUID()
		require.NoError(t, err)
		got, ok := parseID(id)
		require.True(t, ok, id)
		require.Equal(t, id, got)
		require.Equal(t, byte('4'), id[14], "version 4")
		require.Contains(t, "89ab", string(id[19]), "RFC 9562 variant")
		require.False(t, seen[id])
		seen[id] = true
	}
	for _, bad := range []string{"", "0000000000000000000000000000000000000", "00000000-0000-4000-8000-00000000000g",
		"00000000-0000-4000-8000:000000000000", "00000000_0000-4000-8000-000000000000"} {
		_, ok := parseID(bad)
		require.False(t, ok, bad)
	}
}
