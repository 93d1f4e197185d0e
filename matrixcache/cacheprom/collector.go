package cacheprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/matrixcache"
)

// DefaultNamespace is the prefix of every metric name unless
// Options.Namespace says otherwise.
const DefaultNamespace = "matrixcache"

// Options configure NewCollector.
type Options struct {
	// Namespace is the first part of every metric name. Default (empty)
	// DefaultNamespace ("matrixcache").
	Namespace string
	// ConstLabels are added to every metric, for example
	// prometheus.Labels{"cache": "blocks"} to tell two caches of one
	// process apart. The label name "tier" is taken by the per-tier
	// metrics, and "id", "component" and "severity" by the health
	// metrics. Default: none.
	ConstLabels prometheus.Labels
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return o
}

// StatsSource is what a Collector needs of a cache: *matrixcache.Cache
// implements it.
type StatsSource interface {
	Stats() matrixcache.Stats
}

// Collector is a prometheus.Collector over one cache. Create it with
// NewCollector; it is safe for concurrent use.
type Collector struct {
	src    StatsSource
	bounds []float64 // the finite latency bucket bounds, in seconds

	stats []described[matrixcache.Stats]
	tiers []described[matrixcache.TierStats]
	hists []describedLatency

	// The health report of each snapshot (matrixcache.HealthReport).
	healthOK, healthFindings, healthFinding, healthThreshold *prometheus.Desc
}

// severities are the label values of the health findings counts, each
// exported on every scrape.
var severities = []matrixcache.Severity{matrixcache.SeverityInfo, matrixcache.SeverityWarning, matrixcache.SeverityCritical}

// described is a field with its Desc.
type described[S any] struct {
	field[S]
	desc *prometheus.Desc
}

// describedLatency is a latency with the Descs of its histogram and of its
// maximum.
type describedLatency struct {
	latencyField
	hist, max *prometheus.Desc
}

// NewCollector returns a Collector that exports src's Stats. An invalid
// namespace or constant label is reported when the Collector is registered
// (prometheus.Registerer.Register returns the error).
func NewCollector(src StatsSource, o Options) *Collector {
	o = o.withDefaults()
	c := &Collector{src: src, bounds: latencyBounds()}
	newDesc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(o.Namespace, "", name), help, labels, o.ConstLabels)
	}
	for _, f := range statsFields {
		c.stats = append(c.stats, described[matrixcache.Stats]{f, newDesc(f.name, f.help)})
	}
	for _, f := range tierFields {
		c.tiers = append(c.tiers, described[matrixcache.TierStats]{f, newDesc("tier_"+f.name, f.help, "tier")})
	}
	for _, f := range latencyFields {
		c.hists = append(c.hists, describedLatency{
			latencyField: f,
			hist:         newDesc(f.name+"_seconds", f.help),
			max:          newDesc(f.name+"_max_seconds", "Largest sample of "+prometheus.BuildFQName(o.Namespace, "", f.name+"_seconds")+" since the cache opened."),
		})
	}
	c.healthOK = newDesc("health_ok", "1 when the cache's health report has no Warning or Critical finding, else 0.")
	c.healthFindings = newDesc("health_findings", "Findings of the cache's health report, by severity.", "severity")
	c.healthFinding = newDesc("health_finding", "One finding of the cache's health report; the value is the figure its rule observed.", "id", "component", "severity")
	c.healthThreshold = newDesc("health_finding_threshold", "The bound the observed figure of a health finding crossed.", "id")
	return c
}

// Describe sends the Desc of every metric the Collector exports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.stats {
		ch <- m.desc
	}
	for _, m := range c.tiers {
		ch <- m.desc
	}
	for _, h := range c.hists {
		ch <- h.hist
		ch <- h.max
	}
	ch <- c.healthOK
	ch <- c.healthFindings
	ch <- c.healthFinding
	ch <- c.healthThreshold
}

// Collect takes one Stats snapshot and sends every metric of it.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	for _, m := range c.stats {
		ch <- constMetric(m.desc, m.typ, float64(m.get(&s)))
	}
	for _, m := range c.tiers {
		for _, t := range tiers {
			ch <- constMetric(m.desc, m.typ, float64(m.get(t.get(&s))), t.tier.String())
		}
	}
	for _, h := range c.hists {
		l := h.get(&s)
		ch <- c.histogram(h.hist, l)
		ch <- constMetric(h.max, prometheus.GaugeValue, l.Max.Seconds())
	}
	c.collectHealth(ch, matrixcache.HealthReport(s))
}

// collectHealth sends the health report of the scrape's snapshot.
func (c *Collector) collectHealth(ch chan<- prometheus.Metric, h matrixcache.Health) {
	ok := 0.0
	if h.Healthy {
		ok = 1
	}
	ch <- constMetric(c.healthOK, prometheus.GaugeValue, ok)
	counts := map[matrixcache.Severity]int{
		matrixcache.SeverityInfo: h.Info, matrixcache.SeverityWarning: h.Warning, matrixcache.SeverityCritical: h.Critical,
	}
	for _, sev := range severities {
		ch <- constMetric(c.healthFindings, prometheus.GaugeValue, float64(counts[sev]), sev.String())
	}
	for _, f := range h.Findings {
		ch <- constMetric(c.healthFinding, prometheus.GaugeValue, f.Observed, f.ID, f.Component, f.Severity.String())
		ch <- constMetric(c.healthThreshold, prometheus.GaugeValue, f.Threshold, f.ID)
	}
}

// constMetric is prometheus.NewConstMetric that reports an error as an
// invalid metric, which the registry turns into a scrape error, instead of
// panicking in the scrape.
func constMetric(d *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, typ, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// histogram turns l into a Prometheus histogram. The count is the sum of
// l's buckets, not l.Samples: Stats reads each atomic on its own, so under
// load Samples and the buckets may disagree by a few samples, and the count
// must equal the +Inf bucket.
func (c *Collector) histogram(d *prometheus.Desc, l matrixcache.Latency) prometheus.Metric {
	buckets := make(map[float64]uint64, len(c.bounds))
	var cum uint64
	for i, n := range l.Buckets {
		cum += uint64(max(n, 0))
		if i < len(c.bounds) {
			buckets[c.bounds[i]] = cum
		}
	}
	m, err := prometheus.NewConstHistogram(d, cum, l.Total.Seconds(), buckets)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// latencyBounds returns the upper bounds of matrixcache.Latency's finite
// buckets, in seconds. matrixcache keeps the bounds unexported so no caller
// can change them under a running cache; Latency.Percentile is documented to
// return the upper bound of the bucket holding the ranked sample, so a
// snapshot with its one sample in bucket i yields bound i. Reading the
// bounds this way, rather than copying them here, keeps the histograms right
// if the layout changes; the last bucket has no finite bound and is +Inf.
func latencyBounds() []float64 {
	var l matrixcache.Latency
	bounds := make([]float64, len(l.Buckets)-1)
	for i := range bounds {
		var one matrixcache.Latency
		one.Buckets[i], one.Samples = 1, 1
		bounds[i] = one.Percentile(100).Seconds()
	}
	return bounds
}
