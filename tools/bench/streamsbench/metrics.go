package streamsbench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// logCounters are our server's stream log counters, summed over its
// shards: records appended and fsyncs. Their ratio over a durable run is
// how many XADDs shared an fsync (group commit).
type logCounters struct{ records, fsyncs float64 }

// readLogCounters scrapes them from our server's /metrics at httpAddr
// (ferricstore_log_records_total and ferricstore_log_fsyncs_total).
func readLogCounters(ctx context.Context, httpAddr string) (logCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/metrics", nil)
	if err != nil {
		return logCounters{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return logCounters{}, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return logCounters{}, fmt.Errorf("metrics: %s", resp.Status)
	}
	var c logCounters
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var sum *float64
		switch {
		case strings.HasPrefix(line, "ferricstore_log_records_total"):
			sum = &c.records
		case strings.HasPrefix(line, "ferricstore_log_fsyncs_total"):
			sum = &c.fsyncs
		default:
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return logCounters{}, fmt.Errorf("metrics line %q: %w", line, err)
		}
		*sum += v
	}
	if err := sc.Err(); err != nil {
		return logCounters{}, fmt.Errorf("metrics: %w", err)
	}
	return c, nil
}

// perFsync is the records per fsync between two readings (0 without an
// fsync).
func perFsync(before, after logCounters) float64 {
	if after.fsyncs <= before.fsyncs {
		return 0
	}
	return (after.records - before.records) / (after.fsyncs - before.fsyncs)
}
