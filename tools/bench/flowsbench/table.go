package flowsbench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// printTable writes every system's medians with their spread, and the
// violations, if any.
func printTable(w io.Writer, r *report) {
	c := r.Conditions
	fmt.Fprintf(w, "flows end to end, live: %v flows, %v producers x batches of %v, %v workers x claims of up to %v, %v B payloads; median (min..max) over %v repeats\n",
		c["flows"], c["producers"], c["create_batch"], c["workers"], c["claim_limit"], c["payload_bytes"], c["repeats"])
	if l, ok := c["load_average"].(string); ok {
		fmt.Fprintln(w, "load average:", l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\te2e flows/s\tdue to claim ms p50/p95/p99\tcompleted once\tours/system\t")
	for _, name := range r.order {
		s := r.Systems[name]
		ratio := "-"
		switch name {
		case SystemPostgres:
			ratio = spread(r.VsPostgres, 2)
		case SystemRiver:
			ratio = spread(r.VsRiver, 2)
		case SystemCeiling:
			ratio = spread(r.VsCeiling, 2)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s/%s/%s\t%s\t%s\t\n", name, spread(&s.E2EPerS, 0),
			benchkit.FormatNumber(s.DueToClaimP50Ms.Median, 1), benchkit.FormatNumber(s.DueToClaimP95Ms.Median, 1), benchkit.FormatNumber(s.DueToClaimP99Ms.Median, 1),
			completedOnce(s), ratio)
	}
	tw.Flush()
	for _, name := range r.Skipped {
		fmt.Fprintf(w, "skipped: %s (not registered in this build)\n", name)
	}
	for _, e := range r.Errors {
		fmt.Fprintln(w, "VIOLATION:", e)
	}
}

// completedOnce is the lowest count over the repeats, of the flows each
// run created.
func completedOnce(s *systemReport) string {
	if len(s.Runs) == 0 {
		return "-"
	}
	return strconv.Itoa(slices.Min(s.CompletedOnce)) + "/" + strconv.Itoa(s.Runs[0].Flows)
}

func spread(s *benchkit.Summary, digits int) string {
	if s == nil {
		return "n/a"
	}
	return fmt.Sprintf("%s (%s..%s)", benchkit.FormatNumber(s.Median, digits), benchkit.FormatNumber(s.Min, digits), benchkit.FormatNumber(s.Max, digits))
}
