package httpapi

import (
	"fmt"
	"strconv"

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
}

// newMetrics registers the handler's metrics on reg, or on a registry of
// its own that also holds the engine's and the Go runtime's when reg is
// nil.
func newMetrics(e *ts.Engine, reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		reg: reg,
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
	}
	if reg == nil {
		m.reg = prometheus.NewRegistry()
		m.reg.MustRegister(engineprom.NewCollector(e), collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, c := range []prometheus.Collector{m.cmdDur, m.cmdTotal, m.reqTotal} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("httpapi: metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) request(route string, status int) {
	m.reqTotal.WithLabelValues(route, strconv.Itoa(status)).Inc()
}
