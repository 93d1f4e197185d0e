// Package freeport hands out loopback addresses for servers that a test
// or demo starts in other processes, which must be told their port before
// they bind it.
//
// A port the kernel picks for "127.0.0.1:0" comes from the ephemeral range
// that outgoing connections also draw from, so between closing the probe
// and the server binding it, any client in the machine may take it as its
// source port ("address already in use"). Addr picks below that range,
// where no outgoing connection lands, checks the port can be bound, and
// never hands the same port out twice in one process.
//
//	addr, err := freeport.Addr()
package freeport
