package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Client runs engine commands.
type Client interface {
	// Execute runs c and returns its response, or the engine's error.
	Execute(ctx context.Context, c api.Command) (api.Response, error)
	// Batch runs cs in order and returns one result per command. The
	// error is the batch's own (a transport failure, a refused request);
	// each command's failure is in its Result.
	Batch(ctx context.Context, cs []api.Command) ([]Result, error)
	// Close releases the client's resources (not the engine's).
	Close() error
}

// Result is one command's outcome in a Batch.
type Result struct {
	Response api.Response
	Err      error
}

// ErrInvalidOptions is returned by NewHTTP for options it cannot take.
var ErrInvalidOptions = errors.New("client: invalid options")

// Executor runs one command in the same process: a *temporalstore.Engine
// is one. The client declares it rather than importing the engine, so a
// program that only speaks HTTP does not link the engine.
type Executor interface {
	Execute(ctx context.Context, c api.Command) (api.Response, error)
}

// Local runs commands on an engine in the same process.
type Local struct{ e Executor }

// NewLocal returns a client of e (a *temporalstore.Engine). Closing it does
// not close e.
func NewLocal(e Executor) *Local { return &Local{e: e} }

// Execute implements Client.
func (l *Local) Execute(ctx context.Context, c api.Command) (api.Response, error) {
	return l.e.Execute(ctx, c)
}

// Batch implements Client.
func (l *Local) Batch(ctx context.Context, cs []api.Command) ([]Result, error) {
	out := make([]Result, len(cs))
	for i, c := range cs {
		out[i].Response, out[i].Err = l.e.Execute(ctx, c)
	}
	return out, nil
}

// Close implements Client.
func (l *Local) Close() error { return nil }

// Encodings of HTTP's requests.
const (
	// MessagePack is compact and carries bytes as they are. Default.
	MessagePack = "msgpack"
	// JSON is the original's encoding.
	JSON = "json"
)

// Option defaults.
const (
	DefaultMaxRetries   = 2
	DefaultRetryBackoff = 50 * time.Millisecond
	// DefaultMaxBatch is how many commands one /batch_execute carries.
	DefaultMaxBatch = 1000
	// DefaultMaxIdleConns is how many idle connections are kept.
	DefaultMaxIdleConns = 64
)

// HTTPOptions configures an HTTP client.
type HTTPOptions struct {
	// BaseURL is the server's address, e.g. http://127.0.0.1:17102.
	// Required.
	BaseURL string
	// Token is sent as a bearer token. Default: none.
	Token string
	// Encoding is MessagePack or JSON. Default: MessagePack.
	Encoding string
	// TLSConfig configures https connections (the default transport's).
	// Default: the system's roots.
	TLSConfig *tls.Config
	// HTTPClient sends the requests. Default: a client of its own with a
	// keep-alive transport holding up to DefaultMaxIdleConns idle
	// connections to the server.
	HTTPClient *http.Client
	// MaxRetries bounds the retries of a request that is safe to retry;
	// Disabled (-1) turns them off. Default: DefaultMaxRetries.
	MaxRetries int
	// RetryBackoff is the first retry's wait, doubled each retry.
	// Default: DefaultRetryBackoff.
	RetryBackoff time.Duration
	// MaxBatch bounds the commands of one batch request. Default:
	// DefaultMaxBatch.
	MaxBatch int
}

// Disabled turns off an option whose zero value means its default.
const Disabled = -1

// Validate reports options NewHTTP cannot take.
func (o HTTPOptions) Validate() error {
	switch {
	case !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://"):
		return fmt.Errorf("%w: BaseURL %q is not an http(s) URL", ErrInvalidOptions, o.BaseURL)
	case o.Encoding != "" && o.Encoding != MessagePack && o.Encoding != JSON:
		return fmt.Errorf("%w: Encoding %q", ErrInvalidOptions, o.Encoding)
	case o.MaxRetries < Disabled || o.RetryBackoff < 0 || o.MaxBatch < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalidOptions)
	case o.HTTPClient != nil && o.TLSConfig != nil:
		return fmt.Errorf("%w: TLSConfig with an HTTPClient of the caller's", ErrInvalidOptions)
	}
	return nil
}

// HTTP runs commands on a server's HTTP command surface.
type HTTP struct {
	opts HTTPOptions
	hc   *http.Client
	// own is the transport HTTP made (closed by Close).
	own *http.Transport
	mp  bool
}

// NewHTTP returns a client of the server at opts.BaseURL.
func NewHTTP(opts HTTPOptions) (*HTTP, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Encoding == "" {
		opts.Encoding = MessagePack
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.MaxRetries == Disabled {
		opts.MaxRetries = 0
	}
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = DefaultRetryBackoff
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	c := &HTTP{opts: opts, hc: opts.HTTPClient, mp: opts.Encoding == MessagePack}
	if c.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = DefaultMaxIdleConns, DefaultMaxIdleConns
		t.TLSClientConfig = opts.TLSConfig
		c.own, c.hc = t, &http.Client{Transport: t}
	}
	return c, nil
}

// Close implements Client: it closes the idle connections of the
// transport the client made.
func (c *HTTP) Close() error {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	return nil
}

// Execute implements Client.
func (c *HTTP) Execute(ctx context.Context, cmd api.Command) (api.Response, error) {
	w := wire.FromEngine(cmd)
	body, err := c.encode(wire.Request{Namespace: cmd.Namespace, TableName: cmd.Table, Tenant: cmd.Tenant, Command: &w})
	if err != nil {
		return api.Response{}, err
	}
	var r wire.ExecuteResponse
	if err := c.do(ctx, "/execute", body, api.IsReadKind(cmd.Kind), &r, true); err != nil {
		return api.Response{}, err
	}
	if err := r.Status.Err(); err != nil {
		return api.Response{}, err
	}
	return r.Response.Engine(cmd)
}

// Batch implements Client: consecutive commands addressed to the same
// table (and tenant) go in one request, up to MaxBatch each.
func (c *HTTP) Batch(ctx context.Context, cs []api.Command) ([]Result, error) {
	out := make([]Result, 0, len(cs))
	for start := 0; start < len(cs); {
		end := start + 1
		for end < len(cs) && end-start < c.opts.MaxBatch && sameAddress(&cs[start], &cs[end]) {
			end++
		}
		res, err := c.batch(ctx, cs[start:end])
		if err != nil {
			return out, err
		}
		out = append(out, res...)
		start = end
	}
	return out, nil
}

func sameAddress(a, b *api.Command) bool {
	return a.Namespace == b.Namespace && a.Table == b.Table && a.Tenant == b.Tenant
}

func (c *HTTP) batch(ctx context.Context, cs []api.Command) ([]Result, error) {
	req := wire.BatchRequest{Namespace: cs[0].Namespace, TableName: cs[0].Table, Tenant: cs[0].Tenant, Commands: make([]wire.Command, len(cs))}
	read := true
	for i, cmd := range cs {
		req.Commands[i] = wire.FromEngine(cmd)
		read = read && api.IsReadKind(cmd.Kind)
	}
	body, err := c.encode(req)
	if err != nil {
		return nil, err
	}
	var br wire.BatchResponse
	if err := c.do(ctx, "/batch_execute", body, read, &br, false); err != nil {
		return nil, err
	}
	if err := br.Status.Err(); err != nil {
		return nil, err
	}
	if len(br.Responses) != len(cs) {
		return nil, fmt.Errorf("client: %d responses to a batch of %d", len(br.Responses), len(cs))
	}
	out := make([]Result, len(cs))
	for i, r := range br.Responses {
		if out[i].Err = r.Status.Err(); out[i].Err == nil {
			out[i].Response, out[i].Err = r.Response.Engine(cs[i])
		}
	}
	return out, nil
}

func (c *HTTP) encode(v any) ([]byte, error) {
	if !c.mp {
		return json.Marshal(v)
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (c *HTTP) decode(data []byte, v any) error {
	if !c.mp {
		return json.Unmarshal(data, v)
	}
	d := msgpack.NewDecoder(bytes.NewReader(data))
	d.SetCustomStructTag("json")
	return d.Decode(v)
}

// do posts body to path and decodes a 200 reply into v, retrying what is
// safe to retry. A refused request's status becomes the error (execute
// says its refusals come in the execute envelope).
func (c *HTTP) do(ctx context.Context, path string, body []byte, read bool, v any, execute bool) error {
	wait := c.opts.RetryBackoff
	for attempt := 0; ; attempt++ {
		code, reply, err := c.post(ctx, path, body)
		retry := false
		switch {
		case err != nil:
			retry = read || notSent(err)
		case code == http.StatusOK:
			return c.decode(reply, v)
		case code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
			retry = read
			err = fmt.Errorf("client: %s: HTTP %d", path, code)
		default:
			return c.refusal(path, code, reply, execute)
		}
		if !retry || attempt >= c.opts.MaxRetries || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

func (c *HTTP) refusal(path string, code int, reply []byte, execute bool) error {
	var st wire.Status
	var err error
	if execute {
		var r wire.ExecuteResponse
		err = c.decode(reply, &r)
		st = r.Status
	} else {
		err = c.decode(reply, &st)
	}
	if err != nil || st.OK {
		return fmt.Errorf("client: %s: HTTP %d", path, code)
	}
	return st.Err()
}

func (c *HTTP) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.opts.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if c.mp {
		req.Header.Set("Content-Type", wire.ContentTypeMsgpack)
	} else {
		req.Header.Set("Content-Type", wire.ContentTypeJSON)
	}
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, reply, nil
}

// notSent says err certainly happened before the request reached the
// server: the connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

var (
	_ Client = (*Local)(nil)
	_ Client = (*HTTP)(nil)
)
