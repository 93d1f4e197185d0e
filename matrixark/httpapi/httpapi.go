package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/memory"
)

// DefaultMaxBodyBytes bounds a request body unless Options say otherwise.
const DefaultMaxBodyBytes = 8 << 20

// ErrOptions is a configuration New refuses.
var ErrOptions = errors.New("httpapi: invalid options")

// TenantToken is what an API token grants: a tenant, and with Admin the
// right to reset its memories.
type TenantToken struct {
	Tenant string
	Admin  bool
}

// Options configure New.
type Options struct {
	// Engine serves the /context routes. Required.
	Engine *matrixark.Engine
	// Memories serves the mem0 routes. Required.
	Memories *memory.Memories
	// Tokens maps each API token to its tenant. With none, the handler
	// serves DefaultTenant to every caller without authentication, reset
	// included: for a single-user process on a trusted interface only.
	Tokens map[string]TenantToken
	// DefaultTenant is the tenant served without Tokens. Default "default".
	DefaultTenant string
	// MaxBodyBytes bounds a request body (413 beyond). Default 8 MiB.
	MaxBodyBytes int64
	// Logger receives the causes of 500 responses. Default: discarded.
	Logger *slog.Logger
	// RequestsPerMinute is each tenant's budget of requests, a token
	// bucket refilled at this rate that holds a minute's worth; past it a
	// request is answered 429 with Retry-After. Default
	// DefaultRequestsPerMinute; negative is no limit.
	RequestsPerMinute int
}

// DefaultRequestsPerMinute is a tenant's request budget unless Options say
// otherwise: the original's limit.
const DefaultRequestsPerMinute = 600

func (o Options) withDefaults() Options {
	if o.DefaultTenant == "" {
		o.DefaultTenant = "default"
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RequestsPerMinute == 0 {
		o.RequestsPerMinute = DefaultRequestsPerMinute
	}
	return o
}

// credential is a token's SHA-256 and its grant: comparing digests keeps
// the comparison's time independent of the tokens' lengths.
type credential struct {
	digest [sha256.Size]byte
	grant  TenantToken
}

// Handler serves the context and mem0 routes. Safe for concurrent use.
type Handler struct {
	o     Options
	creds []credential
	mux   *http.ServeMux

	mu       sync.Mutex
	limiters map[string]*rate.Limiter // by tenant
}

// New returns the handler of o's routes.
func New(o Options) (*Handler, error) {
	o = o.withDefaults()
	switch {
	case o.Engine == nil:
		return nil, fmt.Errorf("%w: Engine is required", ErrOptions)
	case o.Memories == nil:
		return nil, fmt.Errorf("%w: Memories is required", ErrOptions)
	case o.MaxBodyBytes < 0:
		return nil, fmt.Errorf("%w: MaxBodyBytes is negative", ErrOptions)
	}
	if err := checkTenant(o.DefaultTenant); err != nil {
		return nil, err
	}
	h := &Handler{o: o, mux: http.NewServeMux(), limiters: map[string]*rate.Limiter{}}
	for tok, grant := range o.Tokens {
		if tok == "" {
			return nil, fmt.Errorf("%w: an empty token", ErrOptions)
		}
		if err := checkTenant(grant.Tenant); err != nil {
			return nil, err
		}
		h.creds = append(h.creds, credential{digest: sha256.Sum256([]byte(tok)), grant: grant})
	}
	h.routes()
	return h, nil
}

// checkTenant applies the Engine's rule for a tenant name.
func checkTenant(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("%w: a token's tenant is empty", ErrOptions)
	case len(t) > matrixark.MaxNameBytes:
		return fmt.Errorf("%w: tenant longer than %d bytes", ErrOptions, matrixark.MaxNameBytes)
	case strings.ContainsFunc(t, unicode.IsSpace) || strings.ContainsRune(t, ':'):
		return fmt.Errorf("%w: tenant %q holds whitespace or a colon", ErrOptions, t)
	}
	return nil
}

// methods maps the methods of one path to their handlers.
type methods map[string]func(http.ResponseWriter, *http.Request, TenantToken)

func (h *Handler) routes() {
	h.handle("/context/ingest", methods{http.MethodPost: h.contextIngest})
	h.handle("/context/retrieve", methods{http.MethodPost: h.contextRetrieve})
	h.handle("/context/pack", methods{http.MethodPost: h.contextPack})
	h.handle("/context/inject", methods{http.MethodPost: h.contextPack})
	h.handle("/context/audit", methods{http.MethodGet: h.contextAudit})
	h.handle("/memories", methods{http.MethodPost: h.addMemories, http.MethodGet: h.getAllMemories,
		http.MethodDelete: h.deleteAllMemories})
	h.handle("/memories/{id}", methods{http.MethodGet: h.getMemory, http.MethodPut: h.updateMemory,
		http.MethodDelete: h.deleteMemory})
	h.handle("/memories/{id}/history", methods{http.MethodGet: h.memoryHistory})
	h.handle("/search", methods{http.MethodPost: h.searchMemories})
	h.handle("/reset", methods{http.MethodPost: h.reset})
	h.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeDetail(w, http.StatusNotFound, "Not Found")
	})
}

// handle routes path by method, itself, so that a wrong method is a JSON
// 405 like every other error.
func (h *Handler) handle(path string, ms methods) {
	allow := make([]string, 0, len(ms))
	for m := range ms {
		allow = append(allow, m)
	}
	slices.Sort(allow)
	h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		fn, ok := ms[r.Method]
		if !ok {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		fn(w, r, r.Context().Value(grantKey{}).(TenantToken))
	})
}

type grantKey struct{}

// ServeHTTP authenticates the caller, whose token picks the tenant, and
// routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	grant := TenantToken{Tenant: h.o.DefaultTenant, Admin: true}
	if len(h.creds) > 0 {
		tok := bearer(r)
		if tok == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeDetail(w, http.StatusUnauthorized, "Not authenticated")
			return
		}
		var ok bool
		if grant, ok = h.authenticate(tok); !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeDetail(w, http.StatusUnauthorized, "Invalid API key")
			return
		}
	}
	if wait, ok := h.admit(grant.Tenant); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		writeDetail(w, http.StatusTooManyRequests, fmt.Sprintf("Rate limit exceeded: %d requests per minute", h.o.RequestsPerMinute))
		return
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, grant)))
}

// admit takes a request from tenant's budget; when it is spent, false and
// how long until a request would be admitted.
func (h *Handler) admit(tenant string) (time.Duration, bool) {
	if h.o.RequestsPerMinute < 0 {
		return 0, true
	}
	h.mu.Lock()
	l := h.limiters[tenant]
	if l == nil {
		// Tenants are the configured tokens' (or the default), so the map
		// stays as small as the configuration.
		l = rate.NewLimiter(rate.Limit(float64(h.o.RequestsPerMinute)/60), h.o.RequestsPerMinute)
		h.limiters[tenant] = l
	}
	h.mu.Unlock()
	res := l.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel() // a refused request spends nothing
		return d, false
	}
	return 0, true
}

// bearer is the request's token: "Authorization: Bearer <token>", else
// "X-API-Key: <token>".
func bearer(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if scheme, tok, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return strings.TrimSpace(r.Header.Get("X-API-Key"))
}

// authenticate compares tok with every configured token in constant time:
// no early exit, so the time taken says nothing of which token, if any,
// matched.
func (h *Handler) authenticate(tok string) (TenantToken, bool) {
	d := sha256.Sum256([]byte(tok))
	found, at := 0, 0
	for i := range h.creds {
		eq := subtle.ConstantTimeCompare(d[:], h.creds[i].digest[:])
		at = subtle.ConstantTimeSelect(eq, i, at)
		found |= eq
	}
	if found == 0 {
		return TenantToken{}, false
	}
	return h.creds[at].grant, true
}

// errBody is a request body that could not be read as JSON.
type errBody struct {
	status int
	detail string
}

func (e *errBody) Error() string { return e.detail }

// decode reads r's JSON body into v: unknown fields are ignored, a body
// over the limit is 413, anything else unreadable is 400.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if r.ContentLength > h.o.MaxBodyBytes {
		return &errBody{http.StatusRequestEntityTooLarge, "Request body too large"}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	err := dec.Decode(v)
	if err == nil {
		// One JSON value, nothing after it.
		if err = dec.Decode(&struct{}{}); err == io.EOF {
			return nil
		}
		if err == nil {
			err = errors.New("more than one JSON value")
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &errBody{http.StatusRequestEntityTooLarge, "Request body too large"}
	case errors.Is(err, io.EOF):
		return &errBody{http.StatusBadRequest, "Request body is required"}
	}
	return &errBody{http.StatusBadRequest, "Invalid JSON body: " + err.Error()}
}

// fail writes err as a response: a body error as it says, ErrInvalid 400
// with its reason, ErrNotFound 404 with notFound, anything else 500 with
// a generic detail and the cause logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, grant TenantToken, err error, notFound string) {
	var eb *errBody
	switch {
	case errors.As(err, &eb):
		writeDetail(w, eb.status, eb.detail)
	case errors.Is(err, matrixark.ErrInvalid):
		writeDetail(w, http.StatusBadRequest, strings.TrimPrefix(err.Error(), matrixark.ErrInvalid.Error()+": "))
	case errors.Is(err, matrixark.ErrNotFound):
		writeDetail(w, http.StatusNotFound, notFound)
	default:
		h.o.Logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path,
			"tenant", grant.Tenant, "err", err)
		writeDetail(w, http.StatusInternalServerError, "Internal server error")
	}
}

func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"detail": detail})
}

func writeMessage(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusOK, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"detail":"Internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

var _ http.Handler = (*Handler)(nil)
