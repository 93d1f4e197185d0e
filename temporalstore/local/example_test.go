package local_test

import (
	"context"
	"fmt"
	"os"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// The engine in a directory of its own: a string set and read back, then a
// feature series appended to and aggregated over a window.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "temporalstore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	e, err := local.Open(ctx, temporalstore.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	run := func(c temporalstore.Command) temporalstore.Response {
		r, err := e.Execute(ctx, c)
		if err != nil {
			panic(err)
		}
		return r
	}
	run(temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("greeting"), Value: []byte("hello")})
	fmt.Println(string(run(temporalstore.Command{Kind: temporalstore.KindGet, Key: []byte("greeting")}).Value))

	// Clicks of one user, by event time in milliseconds.
	run(temporalstore.Command{Kind: temporalstore.KindFAppend, Key: []byte("clicks:ada"), Points: []temporalstore.Point{
		{TS: 1000, Value: []byte("3")}, {TS: 2000, Value: []byte("5")}, {TS: 9000, Value: []byte("4")},
	}})
	sum := run(temporalstore.Command{Kind: temporalstore.KindFAgg, Key: []byte("clicks:ada"), Start: 0, End: 5000, Aggregator: "sum"})
	fmt.Println("clicks before 5 s:", sum.Int)
	// Output:
	// hello
	// clicks before 5 s: 8
}
