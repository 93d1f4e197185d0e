// Package commands serves ferricstore over RESP, with redis-server 7's
// argument rules, error texts and reply shapes in RESP2 and RESP3:
// Commands the streams (XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM,
// XSETID, XGROUP, XREAD, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM,
// XINFO), PubSubCommands publish/subscribe over a pubsub.Broker
// ((P|S)SUBSCRIBE, their UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB), whose
// frames go out through Call.Conn's pusher.
//
// A host RESP server mounts them: Commands returns each verb's name,
// arity, key positions and a Run function whose signature holds only the
// standard library's types and this package's Reply interface, which a
// host's reply writer satisfies as it is. temporalstore's resp server
// takes them through resp.Options.Commands:
//
//	for _, c := range commands.Commands(store) {
//		run := c.Run
//		cmds = append(cmds, resp.Command{Name: c.Name, Arity: c.Arity, Write: c.Write, Connection: c.Connection,
//			FirstKey: c.FirstKey, LastKey: c.LastKey, KeyStep: c.KeyStep,
//			Run: func(r *resp.Request) {
//				run(r.Context(), commands.Call{Args: r.Args, Protocol: r.Protocol(), NoBlock: !r.MayBlock(), Conn: r}, r.Reply())
//			}})
//	}
//
// XREAD and XREADGROUP with BLOCK hold the calling connection until an
// entry is durable, the timeout passes or the connection's context ends.
package commands
