package httpapi

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/kindcases"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Every engine kind, in JSON and in MessagePack: a command sent over HTTP
// to one engine gives the same response, or the same error, as the same
// command run directly on a second engine on the same clock, once the
// reply is decoded. The sequence covers every kind the engine has.
func TestEngineKindsOverHTTP(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			clk := testclock.New(epoch)
			srv, _, _ := newServer(t, clk, nil)
			ref := newEngine(t, clk)
			covered := map[ts.Kind]bool{}
			okCount := 0
			for i, c := range kindcases.Steps(clk.Now()) {
				covered[c.Kind] = true
				want, wantErr := ref.Execute(t.Context(), c)
				got, gotErr := execEngine(t, srv, mp, c)
				msg := fmt.Sprintf("step %d: %s %q", i, c.Kind, c.Key)
				requireSameError(t, wantErr, gotErr, msg)
				require.Equal(t, want, got, msg)
				if wantErr == nil {
					okCount++
				}
			}
			for _, k := range ts.Kinds() {
				require.True(t, covered[k], "kind %s is not exercised", k)
				require.True(t, wire.HasShape(k), "kind %s has no response shape", k)
			}
			require.Greater(t, okCount, 100)
		})
	}
}
