// Package flowresp is a client of a server's FLOW verbs over RESP
// (go-redis, RESP3), shaped as flowworker.Client, so that the flow
// helpers run in a process apart from the server.
//
//	c := flowresp.New(redis.NewClient(&redis.Options{Addr: addr, Protocol: 3}))
//	w := flowworker.Worker{Client: c, Type: "email", Name: "w1", Handler: send}
package flowresp
