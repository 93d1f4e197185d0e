package streamsbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The systems compared.
const (
	sysOurs      = "ours"
	sysRedis     = "redis"
	sysJetStream = "jetstream"
	// sysNull is benchkit.NullServer, answering +OK to every XADD and
	// doing nothing else: the most any server reaches with this client
	// on this machine.
	sysNull = "null"
	// sysNullDurable is benchkit's durable null server: the null server
	// plus one write and fdatasync of each event-loop round's requests
	// before its replies, the ceiling of a durable server here.
	sysNullDurable = "null_durable"
)

// env is what every run needs: the configuration, the binaries built once
// and the directory the runs' data goes under.
type env struct {
	cfg  Config
	base string
	ours string // examples/server
	nats string // tools/natsbench
	log  *slog.Logger
}

// runDir makes a fresh directory for one run's data.
func (e *env) runDir(workload, sys string, repeat int) (string, error) {
	d := filepath.Join(e.base, fmt.Sprintf("%s-%s-%d", workload, sys, repeat+1))
	return d, os.MkdirAll(d, 0o755)
}

// startRESP starts ours or redis-server on dir: durable (ours' default
// table, redis appendfsync always) or async (ours --async with
// cfg.SyncInterval, redis appendfsync everysec).
func (e *env) startRESP(ctx context.Context, sys, dir string, durable bool) (benchkit.ServerProcess, error) {
	switch sys {
	case sysOurs:
		args := append(benchkit.AsyncArgs(!durable, e.cfg.SyncInterval), "--log-level", "warn")
		return benchkit.StartServerProcess(ctx, e.ours, dir, nil, 0, args...)
	case sysRedis:
		return benchkit.StartRedisProcess(ctx, dir, "--save", "", "--appendonly", "yes", "--appendfsync", redisFsync(durable))
	}
	return benchkit.ServerProcess{}, fmt.Errorf("no RESP server %q", sys)
}

func redisFsync(durable bool) string {
	if durable {
		return "always"
	}
	return "everysec"
}

// buildNatsbench builds tools/natsbench, a module of its own (so that
// nats-server's dependencies stay out of tools/go.mod), with the
// workspace off, into dir.
func buildNatsbench(dir string) (string, error) {
	root, err := benchkit.RepoRoot(".")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "natsbench")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join(root, "tools", "natsbench")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build tools/natsbench: %w\n%s", err, b)
	}
	return out, nil
}

// natsResult is the JSON object tools/natsbench prints.
type natsResult struct {
	ServerVersion string  `json:"server_version"`
	Count         int     `json:"count"`
	Seconds       float64 `json:"seconds"`
	OpsPerSec     float64 `json:"ops_per_s"`
	P50Us         float64 `json:"p50_us"`
	P99Us         float64 `json:"p99_us"`
}

// runJetStream runs the natsbench binary once, on a fresh store in dir:
// cfg.Clients publishers over cfg.Streams subjects, synced always
// (durable) or by the server's default.
func (e *env) runJetStream(ctx context.Context, dir string, durable bool) (result, natsResult, error) {
	policy := "default"
	if durable {
		policy = "always"
	}
	args := []string{"--dir", filepath.Join(dir, "jetstream"), "--sync", policy,
		"--publishers", strconv.Itoa(e.cfg.Clients), "--subjects", strconv.Itoa(e.cfg.Streams),
		"--payload", strconv.Itoa(e.cfg.EntryBytes), "--warmup", e.cfg.Warmup.String(),
		"--duration", e.cfg.Duration.String(), "--seed", strconv.FormatUint(e.cfg.Seed, 10)}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+2*(e.cfg.Warmup+e.cfg.Duration))
	defer cancel()
	cmd := exec.CommandContext(ctx, e.nats, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return result{}, natsResult{}, fmt.Errorf("natsbench %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var nr natsResult
	if err := json.Unmarshal(stdout.Bytes(), &nr); err != nil {
		return result{}, natsResult{}, fmt.Errorf("natsbench output %q: %w", stdout.Bytes(), err)
	}
	if nr.Count == 0 {
		return result{}, natsResult{}, fmt.Errorf("natsbench measured no publish: %s", stdout.Bytes())
	}
	return result{Rate: nr.OpsPerSec, P50Us: nr.P50Us, P99Us: nr.P99Us, Count: nr.Count, Seconds: nr.Seconds}, nr, nil
}

// redisVersion is `redis-server --version`, for the report.
func redisVersion() string {
	b, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
