package flowhttp_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/flowhttp"
)

// Whatever is posted to /flows, the handler answers JSON without
// panicking, and a 4xx answer made no flow.
func FuzzFlowCreateBody(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","type":"t"}`,
		`{"id":"b","type":"t","payload":"x","attributes":{"k":"v"},"max_active_ms":"infinity","run_at_ms":1,"idempotent":true}`,
		`{"id":"c","type":"t","payload_base64":"AAEC","priority":-3,"partition_key":"p","state":"later"}`,
		`{"id":"d","type":"t","max_active_ms":0}`,
		`{"id":"e","type":"t","state":"running"}`,
		`{"id":1}`, `{`, `[]`, `null`, ``, `{"id":"f","type":"t"} x`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	st, err := ferricstore.Open(ferricstore.Options{Dir: f.TempDir(), Shards: 2, Async: true})
	require.NoError(f, err)
	f.Cleanup(func() { st.Close() })
	h := flowhttp.New(st.Flows(), flowhttp.Options{MaxBodyBytes: 1 << 16})
	f.Fuzz(func(t *testing.T, body []byte) {
		before := flows(t, st)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/flows", bytes.NewReader(body)))
		var out map[string]any
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), "%q: %s", body, w.Body)
		switch {
		case w.Code == http.StatusCreated:
			require.Equal(t, before+1, flows(t, st))
		case w.Code >= 400 && w.Code < 500:
			require.Contains(t, out, "error")
			require.Equal(t, before, flows(t, st), "%q answered %d made a flow", body, w.Code)
		case w.Code != http.StatusOK:
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		}
	})
}
