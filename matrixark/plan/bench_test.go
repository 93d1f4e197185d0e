package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/temporalstore/temporalstore-go/matrixark/plan"
)

// benchText builds a deterministic text of n words mixing query words,
// intent cues and filler.
func benchText(n int) string {
	vocab := strings.Fields("the customer said checkout payment failed after a fraud review and later " +
		"the risk score changed while support moved the ticket to a new queue on Monday at noon " +
		"with 42 orders pending because the backend service was down for maintenance")
	words := make([]string, n)
	for i := range words {
		words[i] = vocab[(i*7+3)%len(vocab)]
	}
	return strings.Join(words, " ")
}

var sink uint32

func BenchmarkScore(b *testing.B) {
	const words = 300
	text := benchText(words)
	p := plan.New("what is the latest payment fraud status after the move topic 3")
	b.SetBytes(int64(len(text)))
	n := 0
	for b.Loop() {
		sink = p.Score(text)
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*words), "ns/word")
}

func BenchmarkSearch(b *testing.B) {
	x := plan.NewIndex()
	for i := range 5000 {
		x.Add(uint64(i), fmt.Sprintf("%s doc%d", benchText(40+i%60), i))
	}
	var hits []plan.Hit
	for b.Loop() {
		hits = x.Search("checkout fraud after move", 64)
	}
	b.ReportMetric(float64(x.Len()), "docs")
	b.ReportMetric(float64(len(hits)), "hits")
}
