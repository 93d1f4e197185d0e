package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/examples/internal/tsstore"
	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	arkhttp "github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/matrixark/memory"
	"github.com/temporalstore/temporalstore-go/temporalstore/cluster"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
)

// contextRoutes are the paths matrixark serves on the HTTP listener; the
// engine's handler serves the rest.
var contextRoutes = []string{"/context/", "/memories", "/memories/", "/search", "/reset"}

// withContext serves matrixark's context and memory routes beside the
// engine's handler (of opts, which also answers the context_* kinds of
// /execute with matrixark): its records in the engine (tsstore),
// embeddings from an OpenAI-compatible server when
// MATRIXARK_EMBED_BASE_URL names one (lexical ranking otherwise).
//
// In a cluster the context table's one shard is a replicated group like
// any other: node, when set, has every context route served by the member
// leading it (forwarded there once), whose matrixark rebuilds its indexes
// from the table when it becomes that member.
func withContext(ctx context.Context, opts httpapi.Options, c config, node *cluster.Node, log *slog.Logger, reg *prometheus.Registry) (http.Handler, error) {
	store, err := tsstore.Open(ctx, opts.Engine, tsstore.Options{})
	if err != nil {
		return nil, err
	}
	// The context's table is the server's own: not to be dropped.
	opts.Engine.UseTable(tsstore.DefaultNamespace, tsstore.DefaultTable)
	var emb embed.Embedder
	if os.Getenv(embed.EnvBaseURL) != "" {
		if emb, err = embed.FromEnv(os.Getenv); err != nil {
			return nil, fmt.Errorf("context embeddings: %w", err)
		}
	}
	ark := matrixark.New(store, matrixark.Options{Embedder: emb, Logger: log, EventHits: c.contextEventHits})
	for _, reason := range []string{embed.ReasonWidth, embed.ReasonEncoder} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        embed.DeclinedMetric,
			Help:        "Vectors a tenant's embedding Space refused: another width (an outage seeded fallback vectors) or another encoder at the same width (a model swap).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(ark.Declined()[reason]) }))
	}
	tokens := contextTokens(c)
	h, err := arkhttp.New(arkhttp.Options{Engine: ark, Memories: memory.New(ark, store, memory.Options{}), Tokens: tokens, Logger: log, RequestsPerMinute: c.contextRate})
	if err != nil {
		return nil, err
	}
	var routes http.Handler = h
	if len(tokens) == 0 && c.anyToken() {
		// Without a token of their own they would be open to anyone.
		routes = refuseContext
	}
	kinds := contextKinds{ark: ark}
	if node != nil {
		cr := &contextRouter{node: node, ark: ark, local: h, proxies: map[string]*httputil.ReverseProxy{}}
		routes, kinds.router = cr, cr
	}
	opts.Context = kinds
	engine, err := httpapi.New(opts)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", engine)
	for _, p := range contextRoutes {
		mux.Handle(p, routes)
	}
	log.Info("context routes", "embedder", emb != nil, "tenants", len(tokens))
	return mux, nil
}

// forwardedHeader marks a request one member forwarded to another, as the
// engine's HTTP surface does: it is served where it lands.
const forwardedHeader = "X-Temporalstore-Forwarded"

// memberHeader names, in a context route's answer, the member that served
// it (its 40-character node ID).
const memberHeader = "X-Temporalstore-Member"

// contextRouter serves the context routes on the member leading the
// context table's shard: elsewhere it forwards them there.
type contextRouter struct {
	node  *cluster.Node
	ark   *matrixark.Engine
	local http.Handler

	mu      sync.Mutex
	leading bool
	proxies map[string]*httputil.ReverseProxy
}

func (cr *contextRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(forwardedHeader) == "" {
		url, err := cr.leaderURL(r.Context())
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"detail": err.Error()})
			return
		}
		if url != "" {
			cr.proxy(url).ServeHTTP(w, r)
			return
		}
	}
	cr.servingHere()
	w.Header().Set(memberHeader, cr.node.Self())
	cr.local.ServeHTTP(w, r)
}

// servingHere notes that this member serves the context now: if it did
// not before, another member may have written the table meanwhile, and
// matrixark's indexes are rebuilt on next use.
func (cr *contextRouter) servingHere() {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if !cr.leading {
		cr.ark.Invalidate()
		cr.leading = true
	}
}

// leaderWait bounds how long a context request waits for the context
// table's shard to have a leader (an election) before it is refused.
const leaderWait = 3 * time.Second

// leaderURL is the context table leader's HTTP URL ("" for this member),
// once there is one or leaderWait passed.
func (cr *contextRouter) leaderURL(ctx context.Context) (string, error) {
	deadline := time.Now().Add(leaderWait)
	for {
		url, err := cr.node.TableLeader(tsstore.DefaultNamespace, tsstore.DefaultTable, 0)
		if err == nil || time.Now().After(deadline) {
			return url, err
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// proxy forwards to the member at url, marking the requests forwarded.
func (cr *contextRouter) proxy(url string) *httputil.ReverseProxy {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.leading = false
	if p := cr.proxies[url]; p != nil {
		return p
	}
	target, _ := neturl.Parse(url)
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header.Set(forwardedHeader, "1")
	}}
	cr.proxies[url] = p
	return p
}
