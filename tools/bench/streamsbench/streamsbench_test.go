package streamsbench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// A tiny run of every workload against our server, the real redis-server
// and JetStream (tools/natsbench, built here), end to end: the report's
// shape and the last line's keys.
func TestRunSmoke(t *testing.T) {
	cfg := DefaultConfig(true)
	cfg.Clients, cfg.Duration, cfg.Warmup, cfg.Repeats = 8, 200*time.Millisecond, 50*time.Millisecond, 1
	cfg.ConsumeEntries, cfg.FanoutMessages = 3000, 2000
	cfg.Dir, cfg.Out = t.TempDir(), filepath.Join(t.TempDir(), "streams.json")
	var out bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &out, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	n := `[0-9]+\.[0-9]{2}`
	require.Regexp(t, regexp.MustCompile(`^streams: xadd_durable_vs_redis_ratio=`+n+` xadd_durable_vs_jetstream_ratio=`+n+
		` consume_vs_redis_ratio=`+n+` fanout8_vs_redis_ratio=`+n+` fanout8_p1_vs_redis_ratio=`+n+` fanout8_p64_vs_redis_ratio=`+n+
		` xadd_durable_null_vs_redis_ratio=`+n+` xadd_durable_null_durable_vs_redis_ratio=`+n+` xadd_async_vs_redis_ratio=`+n+` xadd_p64_durable_vs_redis_ratio=`+n+` xadd_async_vs_jetstream_ratio=`+n+` `), lines[len(lines)-1])

	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	var rep struct {
		Workloads  []workloadReport `json:"workloads"`
		Conditions map[string]any   `json:"conditions"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	var names []string
	for _, w := range rep.Workloads {
		names = append(names, w.Name)
		require.NotNil(t, w.VsRedis, w.Name)
		require.Equal(t, w.Name == wXAddDurable || w.Name == wXAddAsync, w.VsJetStream != nil, w.Name)
		for sys, runs := range w.Runs {
			require.Len(t, runs, 1, "%s %s", w.Name, sys)
			r := runs[0]
			require.Positive(t, r.Rate, "%s %s", w.Name, sys)
			require.Positive(t, r.P50Us, "%s %s", w.Name, sys)
			require.GreaterOrEqual(t, r.P99Us, r.P50Us, "%s %s", w.Name, sys)
		}
		switch w.Name {
		case wXAddDurable:
			require.NotNil(t, w.NullVsRedis, "the null server's ceiling")
			require.NotNil(t, w.NullDurableVsRedis, "the durable null server's ceiling")
			require.NotNil(t, w.OursPerFsync, "ours' records per fsync, from its /metrics")
			require.GreaterOrEqual(t, w.OursPerFsync.Median, 1.0)
		case wConsume:
			require.Equal(t, cfg.ConsumeEntries, w.Runs[sysOurs][0].Count, "every entry consumed and acknowledged")
		case wFanoutP1:
			require.Equal(t, cfg.Subscribers*fanoutP1Messages(cfg), w.Runs[sysRedis][0].Count, "every message delivered to every subscriber")
		case wFanoutP64:
			require.Equal(t, cfg.Subscribers*cfg.FanoutMessages, w.Runs[sysOurs][0].Count, "every message delivered to every subscriber")
		}
	}
	require.Equal(t, []string{wXAddDurable, wXAddAsync, wXAddP64, wConsume, wFanoutP1, wFanoutP64}, names)
	require.Contains(t, rep.Conditions["jetstream"], "nats-server 2.")
	require.Contains(t, rep.Conditions, "host")
	ents, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the run removes its directory")
}

// The last line's fanout8_vs_redis_ratio is the lower of the two
// pipeline depths' medians, and a workload not run is n/a.
func TestSummary(t *testing.T) {
	ratio := func(m float64) *benchkit.Summary { return &benchkit.Summary{Min: m, Median: m, Max: m} }
	rep := &report{Workloads: []workloadReport{
		{Name: wXAddDurable, VsRedis: ratio(1.2), VsJetStream: ratio(3), NullVsRedis: ratio(1.4), NullDurableVsRedis: ratio(1.3), Rate: map[string]benchkit.Summary{sysOurs: {Median: 40000}}},
		{Name: wFanoutP1, VsRedis: ratio(0.9)},
		{Name: wFanoutP64, VsRedis: ratio(1.1)},
	}}
	require.Equal(t, "streams: xadd_durable_vs_redis_ratio=1.20 xadd_durable_vs_jetstream_ratio=3.00 consume_vs_redis_ratio=n/a fanout8_vs_redis_ratio=0.90 "+
		"fanout8_p1_vs_redis_ratio=0.90 fanout8_p64_vs_redis_ratio=1.10 xadd_durable_null_vs_redis_ratio=1.40 xadd_durable_null_durable_vs_redis_ratio=1.30 xadd_async_vs_redis_ratio=n/a xadd_p64_durable_vs_redis_ratio=n/a xadd_async_vs_jetstream_ratio=n/a "+
		"ours_xadd_durable_per_s=40000 ours_consume_per_s=n/a ours_fanout8_p64_per_s=n/a", benchkit.SummaryLine("streams", summary(rep)))
}

// entryIDs picks the IDs out of an XREADGROUP reply; nothing new is
// none.
func TestEntryIDs(t *testing.T) {
	bulk := func(s string) value { return value{kind: '$', str: []byte(s)} }
	arr := func(vs ...value) value { return value{kind: '*', n: int64(len(vs)), elems: vs} }
	ids, err := entryIDs(arr(arr(bulk("s"), arr(arr(bulk("1-0"), arr(bulk("f"), bulk("v"))), arr(bulk("1-1"), arr(bulk("f"), bulk("w")))))))
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("1-0"), []byte("1-1")}, ids)
	ids, err = entryIDs(value{kind: '*', null: true})
	require.NoError(t, err)
	require.Empty(t, ids)
	_, err = entryIDs(arr(bulk("s")))
	require.Error(t, err)
}

// A subscriber counts every message in order: a gap is an error.
func TestSubscriberChecksOrder(t *testing.T) {
	frame := func(seq uint64) string {
		payload := make([]byte, 32)
		binary.BigEndian.PutUint64(payload, seq)
		return "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$32\r\n" + string(payload) + "\r\n"
	}
	for _, tc := range []struct {
		seqs []uint64
		err  string
	}{
		{[]uint64{0, 1, 2}, ""},
		{[]uint64{0, 2, 3}, "message 2 arrived where message 1 was due"},
		{[]uint64{1, 0, 2}, "message 1 arrived where message 0 was due"},
	} {
		var in strings.Builder
		for _, seq := range tc.seqs {
			in.WriteString(frame(seq))
		}
		s := &subscriber{c: &conn{r: bufio.NewReader(strings.NewReader(in.String()))}, want: len(tc.seqs), payload: make([]byte, 32)}
		err := s.loop(time.Now())
		if tc.err == "" {
			require.NoError(t, err)
			require.Equal(t, 3, s.received)
			require.Len(t, s.latencies, 3)
		} else {
			require.EqualError(t, err, tc.err)
		}
	}
}
