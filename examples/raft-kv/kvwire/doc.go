// Package kvwire is raft-kv's binary protocol: many requests in flight on
// one TCP connection, answered in any order, for clients that would spend
// more on HTTP than on the write itself.
//
// Every message is a frame: a 4-byte big-endian length, then that many
// bytes of body. A request body is
//
//	8-byte big-endian request ID (chosen by the client, echoed back)
//	1 byte operation: 'p' put, 'g' linearizable get, 's' stale get
//	uvarint key length, key
//	value: the rest of the body (puts only)
//
// and a response body is
//
//	8-byte big-endian request ID
//	1 byte status (see Status)
//	payload: the rest; the value of a get, the leader's raft ID as a
//	uvarint for StatusNotLeader, a message for the error statuses
//
// A frame longer than MaxFrame ends the connection, since the stream can
// no longer be trusted; a well-framed request that does not decode is
// answered StatusBadRequest and the connection goes on.
//
// The server answers each request once, when raft has applied the put or
// served the read; a client matches answers to requests by ID. Closing a
// connection abandons its requests in flight: a put among them may still
// be applied, like a put that timed out.
package kvwire
