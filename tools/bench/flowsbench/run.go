package flowsbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// verifyTimeout bounds the query after a run: it reads one table.
const verifyTimeout = 2 * time.Minute

// Run executes the benchmark with the registered systems, writes the JSON
// report, prints the table and, last, the summary line to stdout, and logs
// progress to log. A system that fails stops it; an exactly-once
// violation is reported and then fails it, after the report is written.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	return run(ctx, cfg, registry, stdout, log)
}

// run is Run with the registry to pick systems from.
func run(ctx context.Context, cfg Config, reg map[string]factory, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("flows")
		if err != nil {
			return err
		}
		out = p
	}
	systems := selectSystems(cfg.Systems, reg, log)
	if len(systems) == 0 {
		return fmt.Errorf("none of the systems %v is registered in this build", cfg.Systems)
	}
	base, err := os.MkdirTemp(cfg.Dir, "bench-flows-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	// The PostgreSQL clusters run as the postgres OS user when this runs
	// as root; the per-run directories are made below base for them.
	if err := os.Chmod(base, 0o755); err != nil {
		return err
	}
	load := loadAverage()
	items := makeItems(cfg.Flows, cfg.PayloadBytes, cfg.Seed)
	runs := map[string][]runResult{}
	described := map[string]string{}
	err = benchkit.Alternate(ctx, cfg.Repeats, systems, func(ctx context.Context, r int, name string) error {
		dir := filepath.Join(base, fmt.Sprintf("%s-%d", name, r+1))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		log.Info("run", "system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats), "flows", cfg.Flows)
		res, desc, err := runOnce(ctx, cfg, reg[name], items, dir, log)
		if err != nil {
			return err
		}
		if desc != "" {
			described[name] = desc
		}
		res.Repeat = r + 1
		runs[name] = append(runs[name], res)
		log.Info("done", "system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats),
			"e2e_per_s", benchkit.FormatNumber(res.E2EPerS, 0), "e2e_s", benchkit.FormatNumber(res.E2ESeconds, 2),
			"due_to_claim_p50_ms", benchkit.FormatNumber(res.DueToClaimP50Ms, 1), "p99_ms", benchkit.FormatNumber(res.DueToClaimP99Ms, 1),
			"completed_once", res.CompletedOnce, "violations", len(res.Violations))
		return nil
	})
	if err != nil {
		return err
	}
	rep := newReport(cfg, systems, runs, began)
	rep.Conditions = conditions(cfg, systems, load, described, began)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	printTable(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("flows", rep.Summary))
	if len(rep.Errors) > 0 {
		return fmt.Errorf("exactly-once violated: %s", strings.Join(rep.Errors, "; "))
	}
	return nil
}

// runOnce makes, starts and runs one system on dir, checks exactly-once
// and closes it. It returns the system's description too, where it has
// one.
func runOnce(ctx context.Context, cfg Config, f factory, items []item, dir string, log *slog.Logger) (_ runResult, desc string, err error) {
	s := f(cfg, log)
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	if err := s.Start(ctx, dir); err != nil {
		return runResult{}, "", fmt.Errorf("start: %w", err)
	}
	if d, ok := s.(describer); ok {
		desc = d.Describe()
	}
	res, t, err := live(ctx, cfg, s, items, log)
	if err != nil {
		return runResult{}, "", err
	}
	vctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	once, verr := s.Verify(vctx, len(items))
	res.CompletedOnce = once
	res.Violations = t.problems()
	if verr != nil {
		if errors.Is(verr, context.Canceled) || errors.Is(verr, context.DeadlineExceeded) {
			return runResult{}, "", fmt.Errorf("verify: %w", verr)
		}
		res.Violations = append(res.Violations, "verify: "+verr.Error())
	}
	if once != len(items) {
		res.Violations = append(res.Violations, fmt.Sprintf("%d of %d flows completed exactly once, by the system's own record", once, len(items)))
	}
	return res, desc, nil
}

// makeItems returns n flows with ids flowID(i) and payloads of random
// bytes from seed: every system gets the same.
func makeItems(n, payloadBytes int, seed uint64) []item {
	rng := rand.New(rand.NewChaCha8([32]byte{0: byte(seed), 1: byte(seed >> 8), 2: byte(seed >> 16), 3: byte(seed >> 24),
		4: byte(seed >> 32), 5: byte(seed >> 40), 6: byte(seed >> 48), 7: byte(seed >> 56)}))
	buf := make([]byte, n*payloadBytes)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	items := make([]item, n)
	for i := range items {
		items[i] = item{ID: flowID(i), Payload: buf[i*payloadBytes : (i+1)*payloadBytes : (i+1)*payloadBytes]}
	}
	return items
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute load ("" where there
// is none): on a shared machine, what else ran beside the benchmark.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
