package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/examples/internal/tsstore"
	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	arkhttp "github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/matrixark/memory"
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
func withContext(ctx context.Context, opts httpapi.Options, c config, log *slog.Logger, reg *prometheus.Registry) (http.Handler, error) {
	store, err := tsstore.Open(ctx, opts.Engine, tsstore.Options{})
	if err != nil {
		return nil, err
	}
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
	tokens := c.contextTokens
	if len(tokens) == 0 && len(c.tokens) > 0 {
		// The server's read-write tokens reach the default tenant.
		tokens = map[string]arkhttp.TenantToken{}
		for _, t := range c.tokens {
			tokens[t] = arkhttp.TenantToken{Tenant: "default", Admin: true}
		}
	}
	h, err := arkhttp.New(arkhttp.Options{Engine: ark, Memories: memory.New(ark, store, memory.Options{}), Tokens: tokens, Logger: log, RequestsPerMinute: c.contextRate})
	if err != nil {
		return nil, err
	}
	opts.Context = contextKinds{ark: ark}
	engine, err := httpapi.New(opts)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", engine)
	for _, p := range contextRoutes {
		mux.Handle(p, h)
	}
	log.Info("context routes", "embedder", emb != nil, "tenants", len(tokens))
	return mux, nil
}
