// Package commands serves ferricstore over RESP, with redis-server 7's
// argument rules, error texts and reply shapes in RESP2 and RESP3:
// Commands the streams (XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM,
// XSETID, XGROUP, XREAD, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM,
// XINFO), PubSubCommands publish/subscribe over a pubsub.Broker
// ((P|S)SUBSCRIBE, their UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB), whose
// frames go out through Call.Conn's pusher.
//
// A host RESP server mounts them: Commands returns each verb's name,
// arity, key positions, a Run function whose signature holds only the
// standard library's types and this package's Reply interface, which a
// host's reply writer satisfies as it is, and for XADD a RunMany that
// serves a pipelined run at once (its adds share an fsync). The examples
// mount them on temporalstore's resp server (examples/internal/ferricmount):
//
//	cmds := ferricmount.Mount(append(commands.Commands(store), commands.PubSubCommands(broker)...))
//	srv, err := resp.New(resp.Options{Engine: e, Commands: cmds})
//
// A Conn that is also a Notifier gets the stream verbs' keyspace
// notifications (xadd, xtrim, xgroup-*, ...), and one that is a Blocker
// does the waiting of XREAD and XREADGROUP with BLOCK, which hold the call
// until an entry is durable, the timeout passes or the client goes away.
package commands
