package client_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/client"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// A client of a server's HTTP surface (here one the example starts): a
// command, then a batch in one round trip.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "client-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	e, err := local.Open(ctx, temporalstore.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	h, err := httpapi.New(httpapi.Options{Engine: e})
	if err != nil {
		panic(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(l)
	defer hs.Close()

	c, err := client.NewHTTP(client.HTTPOptions{BaseURL: "http://" + l.Addr().String()})
	if err != nil {
		panic(err)
	}
	if _, err := c.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("greeting"), Value: []byte("hello")}); err != nil {
		panic(err)
	}
	res, err := c.Batch(ctx, []temporalstore.Command{
		{Kind: temporalstore.KindGet, Key: []byte("greeting")},
		{Kind: temporalstore.KindIncrBy, Key: []byte("visits"), Delta: 2},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res[0].Response.Value), res[1].Response.Int)
	// Output: hello 2
}
