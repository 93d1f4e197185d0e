// Package faultproxy is a loopback TCP proxy that injects network faults
// between a client and a server, for tests of processes that talk over
// TCP (cluster members, clients and servers): pass-through, a delay on
// every byte in both directions, a blackhole that swallows what is sent
// while keeping the connections open (a partition as the sender sees
// it), dropping every open connection, and refusing new ones.
//
//	p, err := faultproxy.Start("127.0.0.1:6380")
//	defer p.Close()
//	client := dial(p.Addr())
//	p.SetDelay(50 * time.Millisecond)
//	p.SetBlackhole(true) // writes succeed, nothing arrives
//	p.DropAll()          // peers see the connections end
//
// Faults apply at once to open connections and new ones alike.
package faultproxy
