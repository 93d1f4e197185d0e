package soakbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// ErrBoundsBroken is returned by Run when the run broke a bound (RSS
// growth, p99 growth, errors); the report is written all the same.
var ErrBoundsBroken = errors.New("soakbench: a soak bound was broken")

// report is the JSON written at the end.
type report struct {
	Name       string        `json:"name"`
	Started    string        `json:"started"`
	Conditions benchkit.Host `json:"conditions"`
	Server     serverReport  `json:"server"`
	Config     configReport  `json:"config"`
	Plan       planReport    `json:"plan"`
	Classes    []class       `json:"classes"`
	// Interrupted is set when the run was stopped before its duration.
	Interrupted bool         `json:"interrupted,omitempty"`
	Verdict     Verdict      `json:"verdict"`
	Windows     []WindowStat `json:"windows"`
	Samples     []Sample     `json:"samples"`
	PNG         string       `json:"png"`
}

type serverReport struct {
	Binary string   `json:"binary"`
	Args   []string `json:"args"`
	// Commits says how the default table commits: durable (acknowledged
	// after fsync) unless --async.
	Commits     string `json:"commits"`
	Durable     bool   `json:"durable"`
	Maintenance string `json:"maintenance"`
	// LogLines counts the lines the server logged at warn and above; the
	// log is kept beside the report when there are any.
	LogLines int    `json:"log_lines"`
	Log      string `json:"log,omitempty"`
}

type configReport struct {
	DurationS       float64 `json:"duration_s"`
	Rate            float64 `json:"rate"`
	WorkersPerClass int     `json:"workers_per_class"`
	SampleIntervalS float64 `json:"sample_interval_s"`
	RSSGrowth       float64 `json:"rss_growth"`
	P99Growth       float64 `json:"p99_growth"`
	P99FloorMs      float64 `json:"p99_floor_ms"`
	Seed            uint64  `json:"seed"`
}

type planReport struct {
	WarmupS float64 `json:"warmup_s"`
	WindowS float64 `json:"window_s"`
	Windows int     `json:"windows"`
}

// Run runs the soak: it builds and starts the server, drives it for
// cfg.Duration, writes the report and the plot, and prints the verdict and
// the summary line to stdout. It returns ErrBoundsBroken when a bound
// broke, after writing everything.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("soak-" + began.UTC().Format("20060102-150405"))
		if err != nil {
			return err
		}
		out = p
	}
	base, err := os.MkdirTemp(cfg.Dir, "soakbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	log.Info("building the server", "pkg", "./examples/server")
	bin, err := benchkit.BuildExample(base, "./examples/server", "ts-server")
	if err != nil {
		return err
	}
	srvLog := filepath.Join(base, "server.log")
	srv, err := startServer(ctx, bin, filepath.Join(base, "data"), srvLog, cfg.Async)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.stop()
		}
	}()
	if _, err := rssBytes(srv.pid); err != nil {
		return err
	}
	l, err := newLoad(ctx, srv, cfg.Workers)
	if err != nil {
		return err
	}
	defer l.close()
	if err := l.prepare(ctx); err != nil {
		return err
	}

	p := planFor(cfg.Duration)
	classes := l.classes()
	recs := make([]*recorder, len(classes))
	for i := range recs {
		recs[i] = newRecorder(p.Windows)
	}
	rep := &report{
		Name: "soak", Started: began.UTC().Format(time.RFC3339), Conditions: benchkit.HostConditions(),
		Server: serverReport{
			Binary: "examples/server (go build of this checkout)", Args: srv.args, Durable: !cfg.Async,
			Commits:     map[bool]string{false: "durable: acknowledged after fsync (the server's default)", true: "async: acknowledged once written, fsynced every 10ms (--async)"}[cfg.Async],
			Maintenance: "on, every 1s (the server's default: TTL expiry, trimming, checkpoints)",
		},
		Config: configReport{
			DurationS: cfg.Duration.Seconds(), Rate: cfg.Rate, WorkersPerClass: cfg.Workers,
			SampleIntervalS: cfg.sampleInterval().Seconds(), RSSGrowth: cfg.RSSGrowth, P99Growth: cfg.P99Growth,
			P99FloorMs: float64(cfg.P99Floor) / float64(time.Millisecond), Seed: cfg.Seed,
		},
		Plan:    planReport{WarmupS: p.Warmup.Seconds(), WindowS: p.Window.Seconds(), Windows: p.Windows},
		Classes: classes,
	}
	log.Info("soak", "duration", cfg.Duration, "rate", cfg.Rate, "warmup", p.Warmup, "windows", fmt.Sprintf("%d × %s", p.Windows, p.Window),
		"sample_every", cfg.sampleInterval(), "durable", !cfg.Async, "server_pid", srv.pid)

	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	start := time.Now()
	wait := runWorkers(loadCtx, classes, recs, cfg.Rate, cfg.Workers, cfg.Seed)
	samples, runErr := sampleLoop(ctx, cfg, p, srv, classes, recs, start, log)
	stopLoad()
	wait()
	rep.Samples = samples
	if errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded) {
		rep.Interrupted = true
	}

	stopErr := srv.stop()
	stopped = true
	if runErr == nil && stopErr != nil {
		runErr = fmt.Errorf("stop the server: %w%s", stopErr, srv.logTail(10))
	}
	if lines := logLines(srvLog); len(lines) > 0 {
		rep.Server.LogLines = len(lines)
		rep.Server.Log = strings.TrimSuffix(out, ".json") + ".server.log"
		if err := copyFile(srvLog, rep.Server.Log); err != nil {
			return err
		}
		log.Warn("the server logged warnings", "lines", len(lines), "log", rep.Server.Log, "last", lines[len(lines)-1])
	}

	for i := range p.Windows {
		s, e := p.span(i)
		w := WindowStat{Index: i, StartS: s.Seconds(), EndS: e.Seconds(), Classes: map[string]WindowClass{}}
		for ci, c := range classes {
			w.Classes[c.Name] = recs[ci].window(i)
		}
		rep.Windows = append(rep.Windows, w)
	}
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.Name
	}
	rep.Verdict = check(bounds{RSSGrowth: cfg.RSSGrowth, P99Growth: cfg.P99Growth, P99FloorMs: rep.Config.P99FloorMs}, rep.Conditions.NumCPU, names, rep.Samples, rep.Windows)
	switch {
	case rep.Interrupted:
		rep.Verdict.Violations = append(rep.Verdict.Violations, fmt.Sprintf("interrupted after %.1f of %.1f minutes", rep.Verdict.Minutes, cfg.Duration.Minutes()))
	case runErr != nil:
		first, _, _ := strings.Cut(runErr.Error(), "\n")
		rep.Verdict.Violations = append(rep.Verdict.Violations, first)
	}
	rep.Verdict.OK = len(rep.Verdict.Violations) == 0

	rep.PNG = strings.TrimSuffix(out, ".json") + ".png"
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	if err := writePNG(rep.PNG, rep); err != nil {
		return err
	}
	log.Info("report written", "json", out, "png", rep.PNG, "took", time.Since(began).Round(time.Second))
	if err := printVerdict(stdout, rep, out); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if !rep.Verdict.OK {
		return fmt.Errorf("%w: %s", ErrBoundsBroken, strings.Join(rep.Verdict.Violations, "; "))
	}
	return nil
}

// sampleLoop samples every interval until the run's duration has passed,
// ctx ends or the server dies, and returns the samples.
func sampleLoop(ctx context.Context, cfg Config, p plan, srv *server, classes []class, recs []*recorder, start time.Time, log *slog.Logger) ([]Sample, error) {
	every := cfg.sampleInterval()
	var samples []Sample
	prev := time.Duration(0)
	cpu0, self0 := cpuTimes(srv.pid)
	for i := 1; ; i++ {
		at := min(time.Duration(i)*every, cfg.Duration)
		timer := time.NewTimer(time.Until(start.Add(at)))
		var err error
		select {
		case <-timer.C:
		case <-ctx.Done():
			err = ctx.Err()
		case <-srv.exited:
			err = fmt.Errorf("%w after %s: %v%s", ErrServerExited, time.Since(start).Round(time.Second), srv.waitErr, srv.logTail(20))
		}
		timer.Stop()
		if err != nil {
			return samples, err
		}
		s, cpu1, self1 := takeSample(p, srv, classes, recs, prev, at, cpu0, self0)
		cpu0, self0, prev = cpu1, self1, at
		samples = append(samples, s)
		logSample(log, s, at, cfg.Duration, classes)
		if at >= cfg.Duration {
			return samples, nil
		}
	}
}

// takeSample ends the interval from..to: the server's RSS, CPU and data
// size, and every class's figures.
func takeSample(p plan, srv *server, classes []class, recs []*recorder, from, to, cpu0, self0 time.Duration) (Sample, time.Duration, time.Duration) {
	d := to - from
	s := Sample{ElapsedS: to.Seconds(), Window: p.windowOf(from + d/2), Classes: map[string]ClassSample{}}
	var ops int64
	for i, c := range classes {
		cs := recs[i].take(d, s.Window)
		s.Classes[c.Name] = cs
		ops += cs.Ops
		s.Errors += cs.Errors
	}
	s.OpsPerSec = float64(ops) / d.Seconds()
	if rss, err := rssBytes(srv.pid); err == nil {
		s.RSSMB = float64(rss) / (1 << 20)
	}
	s.DataMB = float64(dirBytes(srv.data)) / (1 << 20)
	cpu1, self1 := cpuTimes(srv.pid)
	s.ServerCPU = round3((cpu1 - cpu0).Seconds() / d.Seconds())
	s.ClientCPU = round3((self1 - self0).Seconds() / d.Seconds())
	return s, cpu1, self1
}

// cpuTimes is the CPU time the server and this process have used so far
// (0 where /proc has none).
func cpuTimes(pid int) (server, self time.Duration) {
	server, _ = benchkit.ProcessCPU(pid)
	self, _ = benchkit.ProcessCPU(os.Getpid())
	return server, self
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func logSample(log *slog.Logger, s Sample, at, total time.Duration, classes []class) {
	eta := (total - at).Round(time.Second)
	phase := "warm-up"
	if s.Window >= 0 {
		phase = "window " + strconv.Itoa(s.Window)
	}
	var p99 strings.Builder
	for i, c := range classes {
		if i > 0 {
			p99.WriteByte(' ')
		}
		fmt.Fprintf(&p99, "%s=%.2f", c.Name, s.Classes[c.Name].P99Ms)
	}
	log.Info("soak", "elapsed", fmt.Sprintf("%s/%s", at.Round(time.Second), total), "eta", eta, "phase", phase,
		"ops_per_s", math.Round(s.OpsPerSec), "rss_mb", fmt.Sprintf("%.1f", s.RSSMB), "data_mb", fmt.Sprintf("%.1f", s.DataMB),
		"cpu_cores", fmt.Sprintf("server=%.2f client=%.2f", s.ServerCPU, s.ClientCPU), "p99_ms", p99.String(), "errors", s.Errors)
	for _, c := range classes {
		if cs := s.Classes[c.Name]; cs.Errors > 0 || cs.Late > 0 {
			log.Warn("class trouble", "class", c.Name, "errors", cs.Errors, "late", cs.Late, "last_error", cs.Error)
		}
	}
}

// printVerdict writes the verdict as one JSON object, then the summary
// line, last.
func printVerdict(w io.Writer, rep *report, jsonPath string) error {
	v := rep.Verdict
	obj := struct {
		Verdict
		Durable bool   `json:"durable"`
		JSON    string `json:"json"`
		PNG     string `json:"png"`
	}{v, rep.Server.Durable, jsonPath, rep.PNG}
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n%s\n", b, summaryLine(v))
	return nil
}

// summaryLine is the last line of stdout.
func summaryLine(v Verdict) string {
	return fmt.Sprintf("soak: minutes=%s ops=%d errors=%d rss_warm_mb=%s rss_max_mb=%s rss_ratio=%s p99_ratio_max=%s class=%s ok=%t",
		strconv.FormatFloat(math.Round(v.Minutes*10)/10, 'f', -1, 64), v.Ops, v.Errors,
		benchkit.FormatNumber(v.RSSWarmMB, 1), benchkit.FormatNumber(v.RSSMaxMB, 1),
		benchkit.FormatNumber(float64(v.RSSRatio), 3), benchkit.FormatNumber(float64(v.P99RatioMax), 3), v.WorstClass, v.OK)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
