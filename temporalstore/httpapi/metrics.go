package httpapi

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/engineprom"
)

// metrics are the handler's own, registered on its registry.
type metrics struct {
	reg      *prometheus.Registry
	cmdDur   *prometheus.HistogramVec
	cmdTotal *prometheus.CounterVec
	reqTotal *prometheus.CounterVec
	// forwarded counts the requests sent on to a shard's leader.
	forwarded prometheus.Counter

	// The vectors' children by label values, looked up once: a batch's
	// commands would otherwise hash their labels twice each.
	mu     sync.RWMutex
	durs   map[string]prometheus.Observer
	totals map[[2]string]prometheus.Counter
}

// newMetrics registers the handler's metrics on reg, or on a registry of
// its own that also holds the engine's and the Go runtime's when reg is
// nil.
func newMetrics(e *ts.Engine, reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		reg:    reg,
		durs:   make(map[string]prometheus.Observer),
		totals: make(map[[2]string]prometheus.Counter),
		cmdDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "temporalstore_http_command_duration_seconds",
			Help:    "Time to run a command received over HTTP, by command kind.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 18), // 25 µs .. ~3.3 s
		}, []string{"kind"}),
		cmdTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "temporalstore_http_commands_total",
			Help: "Commands received over HTTP, by command kind and status code.",
		}, []string{"kind", "code"}),
		reqTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "temporalstore_http_requests_total",
			Help: "HTTP requests, by route and HTTP status.",
		}, []string{"route", "status"}),
		forwarded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "temporalstore_http_forwarded_total",
			Help: "Requests forwarded to the member leading their shard (cluster mode).",
		}),
	}
	if reg == nil {
		m.reg = prometheus.NewRegistry()
		m.reg.MustRegister(engineprom.NewCollector(e), collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, c := range []prometheus.Collector{m.cmdDur, m.cmdTotal, m.reqTotal, m.forwarded} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("httpapi: metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) request(route string, status int) {
	m.reqTotal.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

// duration is the command duration histogram of kind.
func (m *metrics) duration(kind string) prometheus.Observer {
	m.mu.RLock()
	o, ok := m.durs[kind]
	m.mu.RUnlock()
	if !ok {
		o = m.cmdDur.WithLabelValues(kind)
		m.mu.Lock()
		m.durs[kind] = o
		m.mu.Unlock()
	}
	return o
}

// command is the commands counter of kind and status code.
func (m *metrics) command(kind, code string) prometheus.Counter {
	k := [2]string{kind, code}
	m.mu.RLock()
	c, ok := m.totals[k]
	m.mu.RUnlock()
	if !ok {
		c = m.cmdTotal.WithLabelValues(kind, code)
		m.mu.Lock()
		m.totals[k] = c
		m.mu.Unlock()
	}
	return c
}
