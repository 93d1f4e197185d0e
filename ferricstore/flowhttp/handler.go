package flowhttp

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore"
)

// handler serves the routes of doc.go over one store's flows.
type handler struct {
	fl       *ferricstore.Flows
	tokens   tokens
	maxBody  int64
	maxBlock time.Duration
	log      *slog.Logger
	mux      *http.ServeMux
}

// New returns the handler of the /flows routes over fl. It serves the
// paths /flows and /flows/... as they are: mount it at both on a server's
// mux. It is safe for concurrent use. fl must not be nil.
func New(fl *ferricstore.Flows, opts Options) http.Handler {
	if fl == nil {
		panic("flowhttp: New needs a *ferricstore.Flows")
	}
	o := opts.withDefaults()
	h := &handler{
		fl: fl, tokens: newTokens(o.ReadWriteTokens, o.ReadOnlyTokens),
		maxBody: o.MaxBodyBytes, maxBlock: o.MaxBlock, log: o.Logger, mux: http.NewServeMux(),
	}
	m := h.mux
	m.HandleFunc("POST /flows", h.create)
	m.HandleFunc("POST /flows/batch", h.batch)
	m.HandleFunc("POST /flows/claim", h.claim)
	m.HandleFunc("GET /flows/stats", h.stats)
	m.HandleFunc("GET /flows/{id}", h.get)
	// One pattern for history: "GET /flows/{id}/history" would overlap
	// "GET /flows/schedules/{name}" with neither more specific, which a
	// ServeMux refuses; the schedules' and policies' routes win over this
	// one, being more specific.
	m.HandleFunc(historyPattern, h.history)
	m.HandleFunc(onePattern, h.one)
	m.HandleFunc("GET /flows/policies/{type}", h.getPolicy)
	m.HandleFunc("PUT /flows/policies/{type}", h.setPolicy)
	m.HandleFunc("GET /flows/schedules", h.listSchedules)
	m.HandleFunc("GET /flows/schedules/{name}", h.getSchedule)
	m.HandleFunc("PUT /flows/schedules/{name}", h.setSchedule)
	m.HandleFunc("DELETE /flows/schedules/{name}", h.deleteSchedule)
	m.HandleFunc("/", h.noRoute)
	return h
}

// ServeHTTP checks the token, bounds the body and routes.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch got := h.tokens.check(r); {
	case got == accessNone:
		w.Header().Set("WWW-Authenticate", `Bearer realm="flows"`)
		h.fail(w, r, &reqError{http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"})
		return
	case got < needs(r.Method):
		h.fail(w, r, &reqError{http.StatusForbidden, "forbidden", "a read-only token cannot " + r.Method})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	h.mux.ServeHTTP(w, r)
}

// The patterns whose last segment picks a handler: a request they match
// is served only when that segment is one they know.
const (
	historyPattern = "GET /flows/{id}/{sub}"
	onePattern     = "POST /flows/{id}/{op}"
)

// noRoute answers a path no route serves (404), or serves with other
// methods only (405, with Allow).
func (h *handler) noRoute(w http.ResponseWriter, r *http.Request) {
	last := r.URL.EscapedPath()
	last, _ = url.PathUnescape(last[strings.LastIndexByte(last, '/')+1:])
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		_, pattern := h.mux.Handler(probe)
		switch {
		case pattern == "/" || pattern == "":
			continue
		case pattern == historyPattern && last != "history":
			continue
		case pattern == onePattern && oneOps[last] == nil:
			continue
		}
		allow = append(allow, m)
	}
	if len(allow) == 0 {
		h.fail(w, r, &reqError{http.StatusNotFound, "not_found", "no route " + r.URL.Path})
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	h.fail(w, r, &reqError{http.StatusMethodNotAllowed, "method_not_allowed", r.Method + " is not served at " + r.URL.Path})
}
