package streamsbench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// printTable writes the medians of every workload: rates, ratios with
// their spread, latencies, and the servers' CPU per op.
func printTable(w io.Writer, r *report) {
	fmt.Fprintln(w, "streams and pub/sub, medians over repeats; ratio = ours/peer rate per repeat pair, median (min..max); latency µs p50/p99")
	if l, ok := r.Conditions["load_average"].(string); ok {
		fmt.Fprintln(w, "load average:", l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tunit\tours\tredis\tjetstream\tours/redis\tours/jetstream\tours p50/p99\tredis p50/p99\tjetstream p50/p99\t")
	for _, wr := range r.Workloads {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", wr.Name, wr.Unit,
			rate(wr, sysOurs), rate(wr, sysRedis), rate(wr, sysJetStream), spread(wr.VsRedis), spread(wr.VsJetStream),
			latency(wr, sysOurs), latency(wr, sysRedis), latency(wr, sysJetStream))
	}
	tw.Flush()
	for _, wr := range r.Workloads {
		if wr.NullVsRedis != nil {
			fmt.Fprintf(w, "ceiling: %s null server (reads, parses, answers +OK, nothing else) %s/s, null/redis %s\n",
				wr.Name, rate(wr, sysNull), spread(wr.NullVsRedis))
		}
		if wr.NullDurableVsRedis != nil {
			fmt.Fprintf(w, "ceiling: %s durable null server (the null server, writing and fdatasyncing each event-loop round before answering it) %s/s, null_durable/redis %s\n",
				wr.Name, rate(wr, sysNullDurable), spread(wr.NullDurableVsRedis))
		}
	}
	fmt.Fprintln(w, "server CPU per op, µs (user and system over the measurement; JetStream's server shares its process with its publishers),")
	fmt.Fprintln(w, "and ours' stream log records per fsync over the run (its /metrics; redis appendfsync always fsyncs once per event-loop pass)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tours CPU\tredis CPU\tours records/fsync\t")
	for _, wr := range r.Workloads {
		perFsync := "-"
		if wr.OursPerFsync != nil {
			perFsync = benchkit.FormatNumber(wr.OursPerFsync.Median, 1)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", wr.Name, cpu(wr, sysOurs), cpu(wr, sysRedis), perFsync)
	}
	tw.Flush()
}

func rate(wr workloadReport, sys string) string {
	s, ok := wr.Rate[sys]
	if !ok {
		return "-"
	}
	return benchkit.FormatNumber(s.Median, 0)
}

func spread(s *benchkit.Summary) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%s (%s..%s)", benchkit.FormatNumber(s.Median, 2), benchkit.FormatNumber(s.Min, 2), benchkit.FormatNumber(s.Max, 2))
}

func latency(wr workloadReport, sys string) string {
	p50, ok := wr.P50Us[sys]
	if !ok {
		return "-"
	}
	return benchkit.FormatNumber(p50.Median, 0) + "/" + benchkit.FormatNumber(wr.P99Us[sys].Median, 0)
}

func cpu(wr workloadReport, sys string) string {
	s, ok := wr.ServerCPUUs[sys]
	if !ok {
		return "-"
	}
	return benchkit.FormatNumber(s.Median, 1)
}
