package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeServer stands in for an OpenAI-compatible /embeddings endpoint. reply
// answers request number n (0-based); it defaults to well-formed vectors in
// reverse index order.
type fakeServer struct {
	*httptest.Server
	calls atomic.Int32

	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	path, method, auth, ctype string
	body                      embeddingsRequest
}

// requests returns what the server has received so far.
func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func newFakeServer(t *testing.T, reply func(n int, w http.ResponseWriter, r *http.Request, in []string)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.calls.Add(1)) - 1
		var body embeddingsRequest
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{r.URL.Path, r.Method, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body})
		f.mu.Unlock()
		if reply == nil {
			writeVectors(w, body.Input, 3)
			return
		}
		reply(n, w, r, body.Input)
	}))
	t.Cleanup(f.Close)
	return f
}

// vectorFor is a recognisable vector for input i so tests can check order.
func vectorFor(i, dim int) []float64 {
	v := make([]float64, dim)
	for j := range v {
		v[j] = float64(i) + float64(j)/10
	}
	return v
}

// writeVectors answers in reverse index order so ordering by index is tested.
func writeVectors(w http.ResponseWriter, in []string, dim int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var data []item
	for i := len(in) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, vectorFor(i, dim)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "m"})
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// noWait records the backoff attempts instead of sleeping.
type noWait struct {
	mu       sync.Mutex
	attempts []int
}

func (n *noWait) backoff(a int) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.attempts = append(n.attempts, a)
	return time.Millisecond
}

func TestOpenAIRequestAndOrder(t *testing.T) {
	srv := newFakeServer(t, nil)
	o, err := NewOpenAI(OpenAIOptions{
		BaseURL:   srv.URL + "/v1/",
		Model:     "text-embedding-3-small",
		APIKeyEnv: "MY_KEY",
		Getenv:    env(map[string]string{"MY_KEY": "sk-test"}),
	})
	require.NoError(t, err)
	require.Equal(t, Info{Provider: ProviderOpenAI, Model: "text-embedding-3-small"}, o.Info(), "dim unknown before the first reply")

	in := []string{"alpha", "beta", "gamma"}
	vecs, err := o.Embed(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, vecs, 3)
	for i, v := range vecs {
		want := vectorFor(i, 3)
		for j := range v {
			require.InDelta(t, want[j], float64(v[j]), 1e-6, "vector %d placed by its index", i)
		}
	}
	require.Equal(t, 3, o.Info().Dim, "dim learned from the reply")
	reqs := srv.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, "/v1/embeddings", r.path)
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "Bearer sk-test", r.auth)
	require.Equal(t, "application/json", r.ctype)
	require.Equal(t, embeddingsRequest{Model: "text-embedding-3-small", Input: in}, r.body)

	// No texts, no request.
	vecs, err = o.Embed(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, vecs)
	require.Equal(t, int32(1), srv.calls.Load())
}

func TestOpenAINoKeyNoHeader(t *testing.T) {
	srv := newFakeServer(t, nil)
	o, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = o.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	r := srv.requests()[0]
	require.Empty(t, r.auth)
	require.Equal(t, DefaultOpenAIModel, r.body.Model)
}

func TestOpenAIConfig(t *testing.T) {
	tests := []struct {
		name string
		opts OpenAIOptions
	}{
		{"no base URL", OpenAIOptions{}},
		{"blank base URL", OpenAIOptions{BaseURL: "  "}},
		{"key variable empty", OpenAIOptions{BaseURL: "http://x", APIKeyEnv: "K", Getenv: env(nil)}},
		{"dim negative", OpenAIOptions{BaseURL: "http://x", Dim: -1}},
		{"dim too wide", OpenAIOptions{BaseURL: "http://x", Dim: MaxDim + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.opts)
			require.ErrorIs(t, err, ErrConfig)
		})
	}
}

func TestOpenAIOptionsFromEnv(t *testing.T) {
	get := env(map[string]string{
		EnvBaseURL:      "http://embed:8080/v1",
		EnvModel:        "nomic-embed-text",
		EnvAPIKeyEnv:    "EMBED_KEY",
		EnvRequireModel: "true",
		"EMBED_KEY":     "k1",
	})
	opts := OpenAIOptionsFromEnv(get)
	require.Equal(t, "http://embed:8080/v1", opts.BaseURL)
	require.Equal(t, "nomic-embed-text", opts.Model)
	require.Equal(t, "EMBED_KEY", opts.APIKeyEnv)
	require.True(t, opts.RequireModel)
	o, err := NewOpenAI(opts)
	require.NoError(t, err)
	require.Equal(t, "k1", o.key, "the key is read through the same getenv")

	e, err := FromEnv(get)
	require.NoError(t, err)
	require.Equal(t, ProviderOpenAI, e.Info().Provider)

	e, err = FromEnv(env(map[string]string{EnvModel: "nomic-embed-text"}))
	require.NoError(t, err)
	require.Equal(t, Info{Provider: ProviderMock, Model: DefaultHashModel, Dim: HashDim}, e.Info(),
		"without a server the mock keeps its own name")
}

func TestOpenAIBadReplies(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"wrong count", `{"data":[{"index":0,"embedding":[1,2]}]}`},
		{"dim 0", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`},
		{"mixed dims", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`},
		{"NaN literal", `{"data":[{"index":0,"embedding":[NaN,1]},{"index":1,"embedding":[1,1]}]}`},
		{"beyond float32", `{"data":[{"index":0,"embedding":[1e39,1]},{"index":1,"embedding":[1,1]}]}`},
		{"beyond float64", `{"data":[{"index":0,"embedding":[1e400,1]},{"index":1,"embedding":[1,1]}]}`},
		{"missing index", `{"data":[{"embedding":[1,1]},{"index":1,"embedding":[1,1]}]}`},
		{"repeated index", `{"data":[{"index":1,"embedding":[1,1]},{"index":1,"embedding":[1,1]}]}`},
		{"index out of range", `{"data":[{"index":0,"embedding":[1,1]},{"index":2,"embedding":[1,1]}]}`},
		{"not JSON", `<html>gateway</html>`},
		{"no data", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
				_, _ = w.Write([]byte(tt.body))
			})
			o, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL})
			require.NoError(t, err)
			_, err = o.Embed(context.Background(), []string{"a", "b"})
			require.ErrorIs(t, err, ErrBadResponse)
			require.Equal(t, int32(1), srv.calls.Load(), "a malformed reply is not retried")
			require.Zero(t, o.Info().Dim)
		})
	}
}

func TestOpenAIConfiguredDim(t *testing.T) {
	srv := newFakeServer(t, nil) // replies with 3 dims
	o, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Dim: 768})
	require.NoError(t, err)
	require.Equal(t, 768, o.Info().Dim)
	_, err = o.Embed(context.Background(), []string{"a"})
	require.ErrorIs(t, err, ErrBadResponse)
}

func TestOpenAIRetries(t *testing.T) {
	status := func(codes ...int) func(int, http.ResponseWriter, *http.Request, []string) {
		return func(n int, w http.ResponseWriter, _ *http.Request, in []string) {
			if n < len(codes) {
				http.Error(w, fmt.Sprintf("boom %d", n), codes[n])
				return
			}
			writeVectors(w, in, 2)
		}
	}
	tests := []struct {
		name      string
		reply     func(int, http.ResponseWriter, *http.Request, []string)
		retries   int
		wantCalls int32
		wantErr   error
	}{
		{"500 then 502 then ok", status(500, 502), 0, 3, nil},
		{"429 then ok", status(429), 0, 2, nil},
		{"503 always", status(503, 503, 503, 503), 0, 3, ErrProvider},
		{"400 is not retried", status(400), 0, 1, ErrProvider},
		{"401 is not retried", status(401), 0, 1, ErrProvider},
		{"retries off", status(500), -1, 1, ErrProvider},
		{"five retries", status(500, 500, 500, 500, 500), 5, 6, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			nw := &noWait{}
			o, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Retries: tt.retries, Backoff: nw.backoff})
			require.NoError(t, err)
			vecs, err := o.Embed(context.Background(), []string{"a", "b"})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.Nil(t, vecs)
			} else {
				require.NoError(t, err)
				require.Len(t, vecs, 2)
			}
			require.Equal(t, tt.wantCalls, srv.calls.Load())
			require.Len(t, nw.attempts, int(tt.wantCalls)-1)
			for i, a := range nw.attempts {
				require.Equal(t, i, a, "backoff gets the attempt number")
			}
		})
	}
}

func TestOpenAIErrorCarriesStatusAndBody(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		http.Error(w, `{"error":"model not found"}`+strings.Repeat("x", 1000), http.StatusNotFound)
	})
	o, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = o.Embed(context.Background(), []string{"a"})
	require.ErrorIs(t, err, ErrProvider)
	require.ErrorContains(t, err, "404")
	require.ErrorContains(t, err, "model not found")
	require.Less(t, len(err.Error()), 400, "the body is cut short")
}

func TestOpenAITimeoutAndNetworkErrorsRetry(t *testing.T) {
	release := make(chan struct{})
	slow := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request, in []string) {
		if n == 0 {
			select { // hang past the client's timeout
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		writeVectors(w, in, 2)
	})
	defer close(release)
	nw := &noWait{}
	o, err := NewOpenAI(OpenAIOptions{BaseURL: slow.URL, Timeout: 50 * time.Millisecond, Backoff: nw.backoff})
	require.NoError(t, err)
	vecs, err := o.Embed(context.Background(), []string{"a"})
	require.NoError(t, err)
	require.Len(t, vecs, 1)
	require.Equal(t, int32(2), slow.calls.Load())

	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close() // connection refused from here on
	nw = &noWait{}
	o, err = NewOpenAI(OpenAIOptions{BaseURL: url, Backoff: nw.backoff})
	require.NoError(t, err)
	_, err = o.Embed(context.Background(), []string{"a"})
	require.ErrorIs(t, err, ErrProvider)
	require.Equal(t, []int{0, 1}, nw.attempts, "1 try + 2 retries")
}

func TestOpenAIFallback(t *testing.T) {
	down := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	nw := &noWait{}
	fb := NewHash("fallback-model")
	o, err := NewOpenAI(OpenAIOptions{BaseURL: down.URL, Model: "real", Backoff: nw.backoff, Fallback: fb})
	require.NoError(t, err)

	vecs, info, err := EmbedWithInfo(context.Background(), o, []string{"a", "b"})
	require.NoError(t, err)
	want, _ := fb.Embed(context.Background(), []string{"a", "b"})
	require.Equal(t, want, vecs)
	require.Equal(t, fb.Info(), info, "the fallback's Info names who produced the vectors")
	require.Equal(t, int32(3), down.calls.Load(), "fallback only after the retries")

	// A failing fallback reports both failures.
	o, err = NewOpenAI(OpenAIOptions{BaseURL: down.URL, Backoff: nw.backoff, Fallback: errEmbedder{}})
	require.NoError(t, err)
	_, err = o.Embed(context.Background(), []string{"a"})
	require.ErrorIs(t, err, ErrProvider)
	require.ErrorIs(t, err, errBroken)

	// A fallback returning the wrong count is refused.
	o, err = NewOpenAI(OpenAIOptions{BaseURL: down.URL, Backoff: nw.backoff, Fallback: shortEmbedder{}})
	require.NoError(t, err)
	_, err = o.Embed(context.Background(), []string{"a", "b"})
	require.ErrorIs(t, err, ErrBadResponse)

	// A caller that gave up gets no fallback.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err = NewOpenAI(OpenAIOptions{BaseURL: down.URL, Backoff: nw.backoff, Fallback: fb})
	require.NoError(t, err)
	_, err = o.Embed(ctx, []string{"a"})
	require.ErrorIs(t, err, context.Canceled)
}

var errBroken = errors.New("broken")

type errEmbedder struct{}

func (errEmbedder) Embed(context.Context, []string) ([][]float32, error) { return nil, errBroken }
func (errEmbedder) Info() Info                                           { return Info{Provider: "test", Model: "broken"} }

type shortEmbedder struct{}

func (shortEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return [][]float32{{1}}, nil
}
func (shortEmbedder) Info() Info { return Info{Provider: "test", Model: "short"} }

func FuzzDecodeEmbeddings(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`), 2)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":-1,"embedding":[1]}]}`), 1)
	f.Add([]byte(`{"data":null}`), 0)
	f.Add([]byte(`[]`), 3)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		vecs, err := decodeEmbeddings(data, n)
		if err != nil {
			require.ErrorIs(t, err, ErrBadResponse)
			require.Nil(t, vecs)
			return
		}
		require.Len(t, vecs, n)
		for _, v := range vecs {
			require.NotEmpty(t, v)
			require.Len(t, v, len(vecs[0]))
			for _, x := range v {
				require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
			}
		}
	})
}
