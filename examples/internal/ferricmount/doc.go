// Package ferricmount mounts ferricstore's verbs (streams, pub/sub) on
// temporalstore's RESP server: Mount adapts each commands.Command to a
// resp.Command, passing the connection for the pub/sub verbs' pushes and
// the request's blocking rule for XREAD and XREADGROUP BLOCK. The engine's
// server (examples/server) and the standalone ferricstore server
// (examples/ferricstore) both serve them through it.
//
//	srv, err := resp.New(resp.Options{Engine: e, Commands: ferricmount.Mount(commands.Commands(store))})
package ferricmount
