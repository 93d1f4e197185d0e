package soakbench

import (
	"fmt"
	"math"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// plan is how a run's time is cut: warm-up, then Windows windows of
// Window each, the last one running to Total.
type plan struct {
	Total, Warmup, Window time.Duration
	Windows               int
}

// The cut of a long run: its first two minutes are warm-up, the rest
// five-minute windows. Shorter runs scale down (planFor).
const (
	fullWarmup = 2 * time.Minute
	fullWindow = 5 * time.Minute
)

// planFor cuts a run of d: warm-up is two minutes, or a fifth of a run
// shorter than ten; the rest is five-minute windows when it holds at least
// three (a remainder under half a window joins the last), else thirds.
func planFor(d time.Duration) plan {
	p := plan{Total: d, Warmup: min(fullWarmup, d/5)}
	post := d - p.Warmup
	if post >= 3*fullWindow {
		p.Window = fullWindow
		p.Windows = int(post / fullWindow)
		if post%fullWindow >= fullWindow/2 {
			p.Windows++
		}
		return p
	}
	p.Window, p.Windows = max(post/3, 1), 3
	return p
}

// windowOf is the window holding the instant at (from the start of the
// load): -1 during warm-up, the last window past its nominal end.
func (p plan) windowOf(at time.Duration) int {
	if at < p.Warmup {
		return -1
	}
	return min(int((at-p.Warmup)/p.Window), p.Windows-1)
}

// span is window i's start and end.
func (p plan) span(i int) (start, end time.Duration) {
	start = p.Warmup + time.Duration(i)*p.Window
	end = start + p.Window
	if i == p.Windows-1 {
		end = p.Total
	}
	return start, end
}

// Sample is what one sample interval recorded.
type Sample struct {
	// ElapsedS is the end of the interval, in seconds from the start of
	// the load.
	ElapsedS float64 `json:"elapsed_s"`
	// Window is the window the interval's middle falls in; -1 in
	// warm-up.
	Window int `json:"window"`
	// RSSMB is the server's resident memory at the end of the interval.
	RSSMB float64 `json:"rss_mb"`
	// DataMB is the size of the server's data directory.
	DataMB float64 `json:"data_mb"`
	// ServerCPU and ClientCPU are the cores the server and this process
	// kept busy over the interval (all threads, user and system).
	ServerCPU float64 `json:"server_cpu_cores"`
	ClientCPU float64 `json:"client_cpu_cores"`
	// OpsPerSec and Errors are over every class.
	OpsPerSec float64                `json:"ops_per_s"`
	Errors    int64                  `json:"errors"`
	Classes   map[string]ClassSample `json:"classes"`
}

// ClassSample is one class's figures over one interval.
type ClassSample struct {
	Ops       int64   `json:"ops"`
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_s"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	// Late counts the times a worker fell more than a second behind its
	// schedule and skipped ahead: the server could not keep up with the
	// offered rate.
	Late int64 `json:"late,omitempty"`
	// Error is the last failure's text, when there was one.
	Error string `json:"error,omitempty"`
}

// WindowStat is one window's latency per class, over all its requests.
type WindowStat struct {
	Index   int                    `json:"index"`
	StartS  float64                `json:"start_s"`
	EndS    float64                `json:"end_s"`
	Classes map[string]WindowClass `json:"classes"`
}

// WindowClass is one class in one window.
type WindowClass struct {
	Ops   int64   `json:"ops"`
	P99Ms float64 `json:"p99_ms"`
}

// bounds are the limits a run must keep (Config's RSSGrowth, P99Growth,
// P99Floor).
type bounds struct {
	RSSGrowth, P99Growth, P99FloorMs float64
}

// Verdict is a run checked against its bounds.
type Verdict struct {
	Minutes   float64 `json:"minutes"`
	Ops       int64   `json:"ops"`
	Errors    int64   `json:"errors"`
	RSSWarmMB float64 `json:"rss_warm_mb"`
	RSSMaxMB  float64 `json:"rss_max_mb"`
	// RSSRatio is the largest RSS after warm-up over the RSS at its end.
	RSSRatio benchkit.Float `json:"rss_ratio"`
	// P99RatioMax is the largest ratio of a later window's p99 to its
	// class's baseline (floored), over every class; WorstClass is that
	// class.
	P99RatioMax benchkit.Float          `json:"p99_ratio_max"`
	WorstClass  string                  `json:"class"`
	Classes     map[string]ClassVerdict `json:"classes"`
	// ServerCPU and ClientCPU are the cores the server and the load
	// generator kept busy on average after warm-up, and BusyPct their sum
	// as a share of the machine's CPUs: how hard the offered rate drove
	// it.
	ServerCPU float64 `json:"server_cpu_cores"`
	ClientCPU float64 `json:"client_cpu_cores"`
	BusyPct   float64 `json:"machine_busy_pct"`
	// Violations says which bounds broke, one line each.
	Violations []string `json:"violations"`
	OK         bool     `json:"ok"`
}

// ClassVerdict is one class's latency against its baseline.
type ClassVerdict struct {
	BaselineP99Ms float64        `json:"baseline_p99_ms"`
	WorstP99Ms    float64        `json:"worst_p99_ms"`
	WorstWindow   int            `json:"worst_window"`
	Ratio         benchkit.Float `json:"ratio"`
}

// check judges a run on a machine of cpus CPUs: its samples (in time
// order, each with its window) and its windows' p99s, against b. The first window is the baseline of
// each class's p99; a class's ratio counts only windows where it ran.
func check(b bounds, cpus int, classes []string, samples []Sample, windows []WindowStat) Verdict {
	v := Verdict{WorstClass: "n/a", Classes: map[string]ClassVerdict{}, Violations: []string{}}
	rssRatio, p99Max := math.NaN(), math.NaN()
	warm := -1
	for i, s := range samples {
		v.Errors += s.Errors
		for _, c := range s.Classes {
			v.Ops += c.Ops
		}
		v.Minutes = s.ElapsedS / 60
		if s.Window < 0 {
			warm = i
		}
	}
	if warm < 0 && len(samples) > 0 {
		warm = 0 // no sample in warm-up: measure from the first
	}
	if warm >= 0 {
		v.RSSWarmMB = samples[warm].RSSMB
		v.RSSMaxMB = v.RSSWarmMB
		for _, s := range samples[warm+1:] {
			v.RSSMaxMB = max(v.RSSMaxMB, s.RSSMB)
			v.ServerCPU += s.ServerCPU
			v.ClientCPU += s.ClientCPU
		}
		if n := len(samples) - warm - 1; n > 0 {
			v.ServerCPU, v.ClientCPU = round3(v.ServerCPU/float64(n)), round3(v.ClientCPU/float64(n))
			v.BusyPct = math.Round(1000*(v.ServerCPU+v.ClientCPU)/float64(max(cpus, 1))) / 10
		}
		if v.RSSWarmMB > 0 && warm+1 < len(samples) {
			rssRatio = v.RSSMaxMB / v.RSSWarmMB
		}
	}
	switch {
	case math.IsNaN(rssRatio):
		v.Violations = append(v.Violations, "no RSS sample after warm-up")
	case rssRatio > b.RSSGrowth:
		v.Violations = append(v.Violations, fmt.Sprintf("rss grew to %.1f MB, %.2f× the %.1f MB at the end of warm-up (bound %.2f×)", v.RSSMaxMB, rssRatio, v.RSSWarmMB, b.RSSGrowth))
	}

	if len(windows) < 2 {
		v.Violations = append(v.Violations, fmt.Sprintf("%d window(s) after warm-up: no latency to compare with a baseline", len(windows)))
	}
	for _, name := range classes {
		if len(windows) == 0 {
			break
		}
		base := windows[0].Classes[name]
		if base.Ops == 0 {
			v.Violations = append(v.Violations, fmt.Sprintf("%s: no request in the baseline window", name))
			continue
		}
		cv := ClassVerdict{BaselineP99Ms: base.P99Ms, WorstWindow: -1}
		ratio := math.NaN()
		den := max(base.P99Ms, b.P99FloorMs)
		for _, w := range windows[1:] {
			wc := w.Classes[name]
			if wc.Ops == 0 || den <= 0 {
				continue
			}
			if r := wc.P99Ms / den; math.IsNaN(ratio) || r > ratio {
				ratio, cv.WorstP99Ms, cv.WorstWindow = r, wc.P99Ms, w.Index
			}
		}
		cv.Ratio = benchkit.Float(ratio)
		v.Classes[name] = cv
		if math.IsNaN(ratio) {
			continue
		}
		if math.IsNaN(p99Max) || ratio > p99Max {
			p99Max, v.WorstClass = ratio, name
		}
		if ratio > b.P99Growth {
			v.Violations = append(v.Violations, fmt.Sprintf("%s: p99 %.2f ms in window %d, %.2f× the baseline's %.2f ms (bound %.2f×)", name, cv.WorstP99Ms, cv.WorstWindow, ratio, cv.BaselineP99Ms, b.P99Growth))
		}
	}
	if v.Errors > 0 {
		v.Violations = append(v.Violations, fmt.Sprintf("%d requests failed", v.Errors))
	}
	v.RSSRatio, v.P99RatioMax = benchkit.Float(rssRatio), benchkit.Float(p99Max)
	v.OK = len(v.Violations) == 0
	return v
}
