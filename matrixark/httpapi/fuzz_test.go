package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/matrixark/memory"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

func newHandler(tb testing.TB, maxBody int64) http.Handler {
	tb.Helper()
	s := memstore.New()
	e := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}})
	h, err := httpapi.New(httpapi.Options{Engine: e, Memories: memory.New(e, s, memory.Options{}), Tokens: testTokens,
		MaxBodyBytes: maxBody})
	require.NoError(tb, err)
	return h
}

// FuzzAddMemories: no body makes POST /memories panic or fail with a 5xx;
// every answer is JSON.
func FuzzAddMemories(f *testing.F) {
	for _, seed := range []string{
		`{"messages":[{"role":"user","content":"I like tea."}],"user_id":"alice"}`,
		`{"messages":"hi","agent_id":"a","infer":false,"metadata":{"k":[1,2,{"x":null}]}}`,
		`{"messages":{"role":"user","content":"x","name":"n"},"run_id":"r","timestamp":1.5e9,"expiration_date":"2030-01-01"}`,
		`{"messages":[{"role":"system","content":"s"}],"user_id":" "}`,
		`{"messages":[{"role":"user","content":7}],"user_id":"u"}`,
		`{"messages":[],"user_id":"u","timestamp":"2026-01-01T00:00:00Z"}`,
		`{"messages":"x","user_id":"u","timestamp":-1}`,
		`{"messages":"x","user_id":"u","timestamp":1e300}`,
		`{"messages":null}`, `[]`, `null`, `"x"`, `{`, ``, `{"user_id":{"a":1}}`,
	} {
		f.Add([]byte(seed))
	}
	h := newHandler(f, 1<<20)
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/memories", bytes.NewReader(body))
		req.Header.Set("X-API-Key", acmeKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code > 499) {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("not JSON: %q", rec.Body)
		}
	})
}

func TestBodyLimitWithoutLength(t *testing.T) {
	h := newHandler(t, 1024)
	for _, c := range []struct {
		size int
		want int
	}{{100, http.StatusOK}, {4096, http.StatusRequestEntityTooLarge}} {
		body := `{"user_id":"alice","messages":"` + strings.Repeat("a", c.size) + `"}`
		// A reader of unknown length: the limit must hold while streaming.
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/memories", io.MultiReader(strings.NewReader(body)))
		req.ContentLength = -1
		req.Header.Set("X-API-Key", acmeKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, c.want, rec.Code, rec.Body.String())
	}
}
