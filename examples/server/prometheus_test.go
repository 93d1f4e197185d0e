package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// serveWithMetrics starts the server with RESP and HTTP, writes a little
// through RESP (a key, a stream entry, a flow) and returns both addresses.
func serveWithMetrics(t *testing.T) (respAddr, httpAddr string) {
	t.Helper()
	respAddr, httpAddr = servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, buildServer(t), "--data", t.TempDir(), "--resp", respAddr, "--http", httpAddr, "--s3", "")
	t.Cleanup(func() { srv.Stop() })
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: respAddr})
	defer rc.Close()
	for i := range 50 {
		require.NoError(t, rc.Set(ctx, fmt.Sprint("k", i), "v", 0).Err())
	}
	require.NoError(t, rc.Get(ctx, "k1").Err())
	require.NoError(t, rc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err())
	require.NoError(t, rc.Do(ctx, "FLOW.CREATE", "f1", "TYPE", "job").Err())
	return respAddr, httpAddr
}

// metricNames are the metric families a /metrics page declares.
func metricNames(t *testing.T, httpAddr string) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	names := map[string]bool{}
	for line := range strings.Lines(string(body)) {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = true
		}
	}
	return names
}

// The Grafana dashboard in docs/ charts only metrics the server serves
// (after its first maintenance round).
func TestDashboardChartsServedMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "grafana", "temporalstore.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	_, httpAddr := serveWithMetrics(t)
	var served map[string]bool
	require.Eventually(t, func() bool {
		served = metricNames(t, httpAddr)
		return served["temporalstore_maintenance_rounds_total"]
	}, 10*time.Second, 100*time.Millisecond)
	name := regexp.MustCompile(`\b(?:temporalstore|matrixcache|ferricstore)_[a-z0-9_]+`)
	charted := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				require.True(t, served[family], "panel %q charts %s, which the server does not serve", p.Title, m)
				charted++
			}
		}
	}
	require.Greater(t, charted, 30)
}

// A real Prometheus (Debian's package) scrapes the server, and a metric
// comes back through Prometheus's query API with the value the server
// counted.
func TestPrometheusScrapesTheServer(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	require.NoError(t, err, "prometheus is not installed (make deps)")
	_, httpAddr := serveWithMetrics(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `global:
  scrape_interval: 200ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: temporalstore
    static_configs:
      - targets: ['%s']
`, httpAddr), 0o644))
	promAddr := servertest.FreeAddr(t)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	query := func(q string) (float64, bool) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" || len(r.Data.Result) == 0 {
			return 0, false
		}
		s, _ := r.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	require.Eventually(t, func() bool {
		v, ok := query(`up{job="temporalstore"}`)
		return ok && v == 1
	}, 30*time.Second, 100*time.Millisecond, "Prometheus never scraped the server:\n%s", out)
	require.Eventually(t, func() bool {
		v, ok := query(`temporalstore_resp_command_duration_seconds_count{command="set"}`)
		return ok && v == 50
	}, 10*time.Second, 100*time.Millisecond, "the SETs' count through Prometheus")
	v, ok := query(`sum(ferricstore_flows_waiting)`)
	require.True(t, ok)
	require.Equal(t, 1.0, v, "the flow created")
}
