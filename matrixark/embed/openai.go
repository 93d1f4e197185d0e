package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults applied by NewOpenAI.
const (
	DefaultOpenAIModel   = "all-MiniLM-L6-v2"
	DefaultOpenAITimeout = 30 * time.Second
	DefaultOpenAIRetries = 2
)

// maxResponseBytes bounds a reply: 2048 inputs × 4096 dims of JSON numbers
// fit well inside it, and a misbehaving server cannot exhaust memory.
const maxResponseBytes = 256 << 20

// OpenAIOptions configures NewOpenAI. Zero values take the defaults noted.
type OpenAIOptions struct {
	// BaseURL is the API root; requests go to BaseURL+"/embeddings". Required.
	BaseURL string
	// Model is sent as "model". Default DefaultOpenAIModel.
	Model string
	// APIKeyEnv names the environment variable holding the bearer key. Empty
	// sends no Authorization header (local servers); a named but empty
	// variable is a configuration error.
	APIKeyEnv string
	// Getenv looks up APIKeyEnv. Default os.Getenv.
	Getenv func(string) string
	// Dim, when positive, is the width every reply must have. Default 0:
	// learned from the first reply and reported by Info.
	Dim int
	// Timeout bounds each attempt. Default DefaultOpenAITimeout.
	Timeout time.Duration
	// Retries is how many times a transport error, 429 or 5xx is retried.
	// 0 means DefaultOpenAIRetries; negative means none.
	Retries int
	// Backoff is the pause before retry number attempt (0-based). Default
	// 200ms·2^attempt.
	Backoff func(attempt int) time.Duration
	// HTTPClient sends requests. Default a client on http.DefaultTransport.
	HTTPClient *http.Client
	// Fallback, when set, embeds a call the provider failed after its
	// retries. It is not used when the caller's context is done.
	Fallback Embedder
	// RequireModel refuses a mock Fallback with ErrModelRequired instead of
	// calling it. OpenAIOptionsFromEnv sets it from EnvRequireModel.
	RequireModel bool
}

func (o *OpenAIOptions) withDefaults() error {
	o.BaseURL = strings.TrimRight(strings.TrimSpace(o.BaseURL), "/")
	if o.BaseURL == "" {
		return fmt.Errorf("%w: base URL is required", ErrConfig)
	}
	if o.Model == "" {
		o.Model = DefaultOpenAIModel
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Dim < 0 || o.Dim > MaxDim {
		return fmt.Errorf("%w: dim %d outside 0..%d", ErrConfig, o.Dim, MaxDim)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultOpenAITimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultOpenAIRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.Backoff == nil {
		o.Backoff = func(attempt int) time.Duration { return 200 * time.Millisecond << attempt }
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return nil
}

// OpenAI embeds through an OpenAI-compatible /embeddings endpoint. It is
// safe for concurrent use.
type OpenAI struct {
	opts OpenAIOptions
	url  string
	key  string
	dim  atomic.Int64 // configured or learned width; 0 while unknown
}

// NewOpenAI validates opts, applies defaults and reads the API key.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	o := &OpenAI{opts: opts, url: opts.BaseURL + "/embeddings"}
	if opts.APIKeyEnv != "" {
		o.key = strings.TrimSpace(opts.Getenv(opts.APIKeyEnv))
		if o.key == "" {
			return nil, fmt.Errorf("%w: API key variable %s is empty", ErrConfig, opts.APIKeyEnv)
		}
	}
	o.dim.Store(int64(opts.Dim))
	return o, nil
}

// Info reports ProviderOpenAI, the model and the width (0 until known).
func (o *OpenAI) Info() Info {
	return Info{Provider: ProviderOpenAI, Model: o.opts.Model, Dim: int(o.dim.Load())}
}

// Embed returns one vector per text, from the provider or else the fallback.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, _, err := o.EmbedInfo(ctx, texts)
	return v, err
}

// EmbedInfo is Embed that also reports who produced the vectors: o's Info,
// or the fallback's when the provider failed.
func (o *OpenAI) EmbedInfo(ctx context.Context, texts []string) ([][]float32, Info, error) {
	if len(texts) == 0 {
		return [][]float32{}, o.Info(), nil
	}
	vecs, err := o.request(ctx, texts)
	if err == nil {
		o.dim.CompareAndSwap(0, int64(len(vecs[0])))
		return vecs, o.Info(), nil
	}
	fb := o.opts.Fallback
	if fb == nil || ctx.Err() != nil {
		return nil, o.Info(), err
	}
	if o.opts.RequireModel && IsMock(fb) {
		return nil, fb.Info(), fmt.Errorf("%w: %q failed and its fallback is the mock: %w", ErrModelRequired, o.opts.Model, err)
	}
	fv, info, ferr := EmbedWithInfo(ctx, fb, texts)
	if ferr == nil {
		ferr = checkVectors(fv, len(texts))
	}
	if ferr != nil {
		return nil, info, fmt.Errorf("%w; fallback %q: %w", err, info.Model, ferr)
	}
	return fv, info, nil
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// request posts texts with retries on transport errors, 429 and 5xx.
func (o *OpenAI) request(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: o.opts.Model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %w", ErrProvider, err)
	}
	for attempt := 0; ; attempt++ {
		vecs, retry, err := o.attempt(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if !retry || attempt >= o.opts.Retries || ctx.Err() != nil {
			return nil, err
		}
		t := time.NewTimer(o.opts.Backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// attempt makes one request and says whether its failure is worth retrying.
func (o *OpenAI) attempt(ctx context.Context, body []byte, n int) ([][]float32, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, o.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.key != "" {
		req.Header.Set("Authorization", "Bearer "+o.key)
	}
	resp, err := o.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %w", ErrProvider, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, true, fmt.Errorf("%w: read reply: %w", ErrProvider, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, fmt.Errorf("%w: status %d: %s", ErrProvider, resp.StatusCode, snippet(data))
	}
	if len(data) > maxResponseBytes {
		return nil, false, fmt.Errorf("%w: reply larger than %d bytes", ErrBadResponse, maxResponseBytes)
	}
	vecs, err := decodeEmbeddings(data, n)
	if err != nil {
		return nil, false, err
	}
	if want := o.opts.Dim; want > 0 && len(vecs[0]) != want {
		return nil, false, fmt.Errorf("%w: dimension %d, configured %d", ErrBadResponse, len(vecs[0]), want)
	}
	return vecs, false, nil
}

// snippet keeps error messages short and printable.
func snippet(b []byte) string {
	const limit = 256
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return strings.TrimSpace(s)
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// decodeEmbeddings parses an /embeddings reply for n inputs, places each
// vector by its index and refuses anything checkVectors would.
func decodeEmbeddings(data []byte, n int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		switch {
		case d.Index == nil:
			return nil, fmt.Errorf("%w: item without index", ErrBadResponse)
		case *d.Index < 0 || *d.Index >= n:
			return nil, fmt.Errorf("%w: index %d outside 0..%d", ErrBadResponse, *d.Index, n-1)
		case out[*d.Index] != nil:
			return nil, fmt.Errorf("%w: index %d repeated", ErrBadResponse, *d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x) // a value beyond float32's range becomes ±Inf and is refused below
			if math.IsInf(float64(v[i]), 0) {
				return nil, fmt.Errorf("%w: vector %d has a non-finite value", ErrBadResponse, *d.Index)
			}
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: vector %d has dimension 0", ErrBadResponse, *d.Index)
		}
		out[*d.Index] = v
	}
	if err := checkVectors(out, n); err != nil {
		return nil, err
	}
	return out, nil
}
