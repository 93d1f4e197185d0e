package resp_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
)

// One engine served over RESP and HTTP on listeners of the program's own,
// with a verb of the program's added to the RESP server.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "resp-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	e, err := local.Open(ctx, temporalstore.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	srv, err := resp.New(resp.Options{Engine: e, Commands: []resp.Command{{
		Name: "HELLO.WORLD", Arity: 1,
		Run: func(r *resp.Request) { r.Reply().Simple("hello, world") },
	}}})
	if err != nil {
		panic(err)
	}
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(rl)
	defer srv.Close()

	h, err := httpapi.New(httpapi.Options{Engine: e})
	if err != nil {
		panic(err)
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(hl)
	defer hs.Close()

	rdb := redis.NewClient(&redis.Options{Addr: rl.Addr().String()})
	defer rdb.Close()
	fmt.Println(rdb.Set(ctx, "greeting", "hello", 0).Val())
	fmt.Println(rdb.Do(ctx, "hello.world").Val())

	res, err := http.Post("http://"+hl.Addr().String()+"/execute", "application/json",
		strings.NewReader(`{"command":{"kind":"string_get","key":"greeting"}}`))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	fmt.Println(res.StatusCode)
	// Output:
	// OK
	// hello, world
	// 200
}
