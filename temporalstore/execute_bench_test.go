package temporalstore

import (
	"fmt"
	"testing"
)

// BenchmarkExecuteGet is a GET of a string written by a pipelined batch,
// through Execute on an async table: the engine's own cost per read, with
// its allocations.
func BenchmarkExecuteGet(b *testing.B) {
	ctx := b.Context()
	e, err := Open(ctx, Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTable(ctx, "n", "t", TableOptions{Async: true}); err != nil {
		b.Fatal(err)
	}
	const keys = 1024
	var batch []Command
	for i := range keys {
		batch = append(batch, Command{Kind: KindSet, Namespace: "n", Table: "t", Key: fmt.Appendf(nil, "k%d", i), Value: []byte("0123456789abcdef")})
		if len(batch) == 16 {
			if _, errs := e.ExecuteBatch(ctx, batch); errs[0] != nil {
				b.Fatal(errs[0])
			}
			batch = batch[:0]
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r, err := e.Execute(ctx, Command{Kind: KindGet, Namespace: "n", Table: "t", Key: batchKey(i % keys)})
		if err != nil || len(r.Value) != 16 {
			b.Fatalf("GET: %v, %d bytes", err, len(r.Value))
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/get")
}

var benchKeys = func() [][]byte {
	k := make([][]byte, 1024)
	for i := range k {
		k[i] = fmt.Appendf(nil, "k%d", i)
	}
	return k
}()

func batchKey(i int) []byte { return benchKeys[i] }
