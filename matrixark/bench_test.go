package matrixark_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

var benchWords = strings.Fields("checkout payment office moved deadline budget parrot flight Tokyo Lisbon " +
	"meeting Thursday refund customer invoice project launch design review garden recipe coffee train " +
	"hotel doctor appointment manager team report dinner weekend")

// benchEngine has n sessions of four messages each.
func benchEngine(b *testing.B, n int, counter tokens.Counter) *matrixark.Engine {
	b.Helper()
	e := matrixark.New(memstore.New(), matrixark.Options{Counter: counter, Now: func() time.Time { return t0 }})
	r := rand.New(rand.NewPCG(1, 2))
	sentence := func() string {
		w := make([]string, 8+r.IntN(10))
		for i := range w {
			w[i] = benchWords[r.IntN(len(benchWords))]
		}
		return strings.Join(w, " ") + "."
	}
	for i := range n {
		msgs := make([]matrixark.Message, 4)
		for j := range msgs {
			msgs[j] = matrixark.Message{Role: "user", Content: sentence()}
		}
		if _, err := e.Ingest(b.Context(), "acme", matrixark.Input{Session: fmt.Sprintf("s%d", i), User: fmt.Sprintf("u%d", i%50),
			Messages: msgs, TimeMs: t0.UnixMilli() + int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// Retrieval and a pack to 1,200 tokens over 2,000 sessions.
func BenchmarkRetrievePack(b *testing.B) {
	for _, c := range []struct {
		name    string
		counter tokens.Counter
	}{{"o200k", tokens.O200k()}, {"words", tokens.Words{}}} {
		b.Run(c.name, func(b *testing.B) {
			e := benchEngine(b, 2000, c.counter)
			q := matrixark.Query{Text: "when did the office move to Lisbon"}
			var blocks int
			for b.Loop() {
				res, err := e.Pack(b.Context(), "acme", matrixark.PackRequest{Retrieve: q, Prompt: "Where is the office?", MaxPromptTokens: 1200})
				if err != nil {
					b.Fatal(err)
				}
				blocks = len(res.Selected) + len(res.Blocked)
			}
			b.ReportMetric(float64(blocks), "blocks")
		})
	}
	b.Run("retrieve", func(b *testing.B) {
		e := benchEngine(b, 2000, tokens.Words{})
		q := matrixark.Query{Text: "when did the office move to Lisbon"}
		for b.Loop() {
			if _, err := e.Retrieve(b.Context(), "acme", q); err != nil {
				b.Fatal(err)
			}
		}
	})
}
