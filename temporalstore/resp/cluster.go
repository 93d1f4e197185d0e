package resp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// Cluster is what a server in a cluster serves Redis Cluster routing
// from (Options.Cluster): which node serves a hash slot now, and the
// cluster's shards. Its methods are called on every keyed command, so
// they must be cheap and safe for concurrent use.
type Cluster interface {
	// Route says who serves slot: self when this node does (it leads the
	// slot's shard; or, for a read on a READONLY connection, it holds one
	// of its replicas), else the RESP address of the node that leads it,
	// "" when none does now.
	Route(slot int, write, readonly bool) (self bool, addr string)
	// ReadBarrier returns once this node's replica of slot's shard holds
	// every write acknowledged before the call: a leader's linearizable
	// read. It is not called for a READONLY connection's reads.
	ReadBarrier(ctx context.Context, slot int) error
	// Shards describes the cluster's shards, for CLUSTER SLOTS, SHARDS,
	// NODES and INFO.
	Shards() []ClusterShard
	// Self is this node's ID: 40 hexadecimal characters, as Redis's.
	Self() string
}

// ClusterAdmin is an optional interface of a Cluster that changes the
// membership: CLUSTER ADDMEMBER id raft-addr resp-addr [http-addr] and
// CLUSTER FORGET id (a raft ID or a 40-character node ID) call it with
// the subcommand and its arguments, and answer OK or its error.
type ClusterAdmin interface {
	ClusterAdmin(ctx context.Context, args []string) error
}

// ClusterShard is one shard of a cluster.
type ClusterShard struct {
	// Slots are the shard's slot ranges, each inclusive.
	Slots [][2]int
	// Nodes hold the shard's replicas, its leader first when it has one.
	Nodes []ClusterNode
}

// ClusterNode is one node holding a replica of a shard.
type ClusterNode struct {
	// ID is the node's ID (40 hexadecimal characters).
	ID string
	// Addr is the node's RESP address, host:port.
	Addr string
	// Leader says the node leads the shard.
	Leader bool
	// Online says the node is reachable (its replica follows).
	Online bool
	// Offset is how far the node's replica has applied (its raft index).
	Offset uint64
}

func registerCluster() {
	register(
		&cmdSpec{name: "cluster", arity: -2, flags: flagNoTx, run: cmdCluster},
		&cmdSpec{name: "readonly", arity: 1, flags: flagNoTx, run: func(c *conn, _ [][]byte) {
			if c.clusterDisabled() {
				return
			}
			c.readonly = true
			c.w.ok()
		}},
		&cmdSpec{name: "readwrite", arity: 1, flags: flagNoTx, run: func(c *conn, _ [][]byte) {
			if c.clusterDisabled() {
				return
			}
			c.readonly = false
			c.w.ok()
		}},
		&cmdSpec{name: "asking", arity: 1, run: func(c *conn, _ [][]byte) {
			if c.clusterDisabled() {
				return
			}
			c.w.ok() // slots never migrate half-way here: ASK is never sent
		}},
	)
}

// clusterDisabled answers Redis's error when the server is not in a
// cluster, and says so.
func (c *conn) clusterDisabled() bool {
	if c.s.opts.Cluster == nil {
		c.errorf("ERR This instance has cluster support disabled")
		return true
	}
	return false
}

// clusterArity is each CLUSTER subcommand served, with its arity.
var clusterArity = map[string]int{"help": 2, "keyslot": 3, "myid": 2, "info": 2, "slots": 2, "shards": 2, "nodes": 2, "addmember": -5, "forget": 3}

// cmdCluster answers CLUSTER as Redis does: an unknown subcommand or a
// wrong argument count first, then, without a cluster, that cluster
// support is disabled.
func cmdCluster(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	arity, ok := clusterArity[sub]
	switch {
	case !ok:
		c.errorf("ERR unknown subcommand '%s'. Try CLUSTER HELP.", cString(args[1]))
		return
	case arity < 0 && len(args) < -arity, arity > 0 && len(args) != arity:
		c.errorf("ERR wrong number of arguments for 'cluster|%s' command", sub)
		return
	case c.clusterDisabled():
		return
	}
	cl := c.s.opts.Cluster
	switch sub {
	case "help":
		c.w.simpleLines([]string{
			"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"INFO", "    Return information about the cluster.",
			"KEYSLOT <key>", "    Return the hash slot for <key>.",
			"MYID", "    Return the node id.",
			"NODES", "    Return cluster configuration seen by node.",
			"SHARDS", "    Return information about slot range mappings and the nodes of each shard.",
			"SLOTS", "    Return information about slots range mappings.",
			"ADDMEMBER <id> <raft-addr> <resp-addr> [<http-addr>]", "    Add a member (started with --cluster-join) to every shard: a learner first, a voter once caught up.",
			"FORGET <id>", "    Remove a member from every shard, moving its leaderships first.",
		})
	case "keyslot":
		c.w.int(int64(temporalstore.KeySlot(args[2])))
	case "myid":
		c.w.bulkString(cl.Self())
	case "info":
		c.w.bulkString(clusterInfo(cl.Shards()))
	case "slots":
		c.clusterSlots(cl.Shards())
	case "shards":
		c.clusterShards(cl.Shards())
	case "nodes":
		c.w.bulkString(clusterNodes(cl.Self(), cl.Shards()))
	case "addmember", "forget":
		admin, ok := cl.(ClusterAdmin)
		if !ok {
			c.errorf("ERR this cluster's membership is not changed over RESP")
			return
		}
		if c.access != accessWrite {
			c.errorf("NOPERM this user has no permissions to change the cluster")
			return
		}
		rest := make([]string, 0, len(args)-1)
		for _, a := range args[1:] {
			rest = append(rest, string(a))
		}
		if err := admin.ClusterAdmin(c.ctx, rest); err != nil {
			c.errorf("ERR %s", err)
			return
		}
		c.w.ok()
	}
}

func clusterInfo(shards []ClusterShard) string {
	assigned, ok, led := 0, 0, 0
	nodes := map[string]bool{}
	for _, sh := range shards {
		n := 0
		for _, r := range sh.Slots {
			n += r[1] - r[0] + 1
		}
		assigned += n
		if len(sh.Nodes) > 0 && sh.Nodes[0].Leader {
			ok += n
			led++
		}
		for _, nd := range sh.Nodes {
			nodes[nd.ID] = true
		}
	}
	state := "ok"
	if ok < temporalstore.HashSlots {
		state = "fail"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster_enabled:1\r\ncluster_state:%s\r\n", state)
	fmt.Fprintf(&b, "cluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:%d\r\n", assigned, ok, assigned-ok)
	fmt.Fprintf(&b, "cluster_known_nodes:%d\r\ncluster_size:%d\r\n", len(nodes), led)
	return b.String()
}

// hostPort splits a RESP address for the replies that give them apart.
func hostPort(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	port, _ := strconv.Atoi(p)
	return h, port
}

// clusterSlots answers CLUSTER SLOTS: each range with its leader first,
// then its other replicas. A shard without a leader is left out, as
// Redis leaves out slots no master serves.
func (c *conn) clusterSlots(shards []ClusterShard) {
	n := 0
	for _, sh := range shards {
		if len(sh.Nodes) > 0 && sh.Nodes[0].Leader {
			n += len(sh.Slots)
		}
	}
	c.w.array(n)
	for _, sh := range shards {
		if len(sh.Nodes) == 0 || !sh.Nodes[0].Leader {
			continue
		}
		for _, r := range sh.Slots {
			c.w.array(2 + len(sh.Nodes))
			c.w.int(int64(r[0]))
			c.w.int(int64(r[1]))
			for _, nd := range sh.Nodes {
				h, p := hostPort(nd.Addr)
				c.w.array(3)
				c.w.bulkString(h)
				c.w.int(int64(p))
				c.w.bulkString(nd.ID)
			}
		}
	}
}

// clusterShards answers CLUSTER SHARDS: each shard's slots and nodes,
// with their role in it.
func (c *conn) clusterShards(shards []ClusterShard) {
	c.w.array(len(shards))
	for _, sh := range shards {
		c.w.mapHeader(2)
		c.w.bulkString("slots")
		c.w.array(2 * len(sh.Slots))
		for _, r := range sh.Slots {
			c.w.int(int64(r[0]))
			c.w.int(int64(r[1]))
		}
		c.w.bulkString("nodes")
		c.w.array(len(sh.Nodes))
		for _, nd := range sh.Nodes {
			h, p := hostPort(nd.Addr)
			role, health := "replica", "online"
			if nd.Leader {
				role = "master"
			}
			if !nd.Online {
				health = "fail"
			}
			c.w.mapHeader(7)
			c.w.bulkString("id")
			c.w.bulkString(nd.ID)
			c.w.bulkString("port")
			c.w.int(int64(p))
			c.w.bulkString("ip")
			c.w.bulkString(h)
			c.w.bulkString("endpoint")
			c.w.bulkString(h)
			c.w.bulkString("role")
			c.w.bulkString(role)
			c.w.bulkString("replication-offset")
			c.w.int(int64(nd.Offset))
			c.w.bulkString("health")
			c.w.bulkString(health)
		}
	}
}

// clusterNodes answers CLUSTER NODES. A node leads some shards and
// follows others, where Redis's nodes are masters or replicas: a node is
// a master here, listing the slots it leads (maybe none), or, when it is
// down, marked fail.
func clusterNodes(self string, shards []ClusterShard) string {
	type node struct {
		addr   string
		online bool
		slots  []string
	}
	nodes := map[string]*node{}
	var order []string
	for _, sh := range shards {
		for _, nd := range sh.Nodes {
			n := nodes[nd.ID]
			if n == nil {
				n = &node{addr: nd.Addr, online: nd.Online}
				nodes[nd.ID] = n
				order = append(order, nd.ID)
			}
			if nd.Leader {
				for _, r := range sh.Slots {
					if r[0] == r[1] {
						n.slots = append(n.slots, strconv.Itoa(r[0]))
					} else {
						n.slots = append(n.slots, fmt.Sprintf("%d-%d", r[0], r[1]))
					}
				}
			}
		}
	}
	var b strings.Builder
	for _, id := range order {
		n := nodes[id]
		flags, link := "master", "connected"
		if id == self {
			flags = "myself,master"
		}
		if !n.online {
			flags += ",fail"
			link = "disconnected"
		}
		_, port := hostPort(n.addr)
		fmt.Fprintf(&b, "%s %s@%d %s - 0 0 0 %s", id, n.addr, port+10000, flags, link)
		for _, s := range n.slots {
			b.WriteString(" ")
			b.WriteString(s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// routed checks, in a cluster, that this node serves the keys of a call
// of spec: they share one slot, and it leads that slot's shard (or holds
// a replica, for a READONLY connection's read). Otherwise it answers
// CROSSSLOT, MOVED or CLUSTERDOWN and returns false. A leader's read
// first passes the cluster's read barrier. Keyless calls run here.
func (c *conn) routed(spec *cmdSpec, args [][]byte) bool {
	cl := c.s.opts.Cluster
	if cl == nil || spec.flags&flagTxControl != 0 {
		return true
	}
	keys := spec.keysOf(args)
	if len(keys) == 0 {
		return true
	}
	slot := temporalstore.KeySlot(keys[0])
	for _, k := range keys[1:] {
		if temporalstore.KeySlot(k) != slot {
			c.refuse(spec, "CROSSSLOT Keys in request don't hash to the same slot")
			return false
		}
	}
	write := spec.flags&flagWrite != 0
	self, addr := cl.Route(slot, write, c.readonly)
	switch {
	case !self && addr == "":
		c.refuse(spec, "CLUSTERDOWN Hash slot not served")
		return false
	case !self:
		c.refuse(spec, fmt.Sprintf("MOVED %d %s", slot, addr))
		return false
	}
	c.slot = slot
	if !write && !c.readonly && c.tx == nil {
		if err := cl.ReadBarrier(c.ctx, slot); err != nil {
			c.refuse(spec, notLeaderReply(cl, slot, err))
			return false
		}
	}
	return true
}

// local reports whether this node serves key now without a read barrier:
// the pipelined fast paths take only such keys, and leave the others to
// dispatch, which redirects them.
func (c *conn) local(key []byte, write bool) bool {
	cl := c.s.opts.Cluster
	if cl == nil {
		return true
	}
	if !write && !c.readonly {
		return false // a leader's read waits for its barrier
	}
	self, _ := cl.Route(temporalstore.KeySlot(key), write, c.readonly)
	return self
}

// notLeaderReply is the reply to a call of slot that found this node not
// leading it after all (leadership moved while it ran): MOVED to the new
// leader when there is one.
func notLeaderReply(cl Cluster, slot int, err error) string {
	if self, addr := cl.Route(slot, true, false); !self && addr != "" {
		return fmt.Sprintf("MOVED %d %s", slot, addr)
	}
	if errors.Is(err, context.Canceled) {
		return "ERR " + err.Error()
	}
	return "TRYAGAIN the slot's shard is electing a leader"
}

// clusterReplication is INFO replication in a cluster: a member leads some
// shards and follows others, so role is master when it leads any, and
// each shard it holds gets a line with its role there and how far its
// replica has applied.
func clusterReplication(cl Cluster) []string {
	self := cl.Self()
	var led, followed, replicas int
	var lines []string
	for i, sh := range cl.Shards() {
		for _, nd := range sh.Nodes {
			if nd.ID != self {
				continue
			}
			role := "follower"
			if nd.Leader {
				role = "leader"
				led++
				for _, o := range sh.Nodes {
					if o.ID != self && o.Online {
						replicas++
					}
				}
			} else {
				followed++
			}
			lines = append(lines, fmt.Sprintf("shard%d:role=%s,offset=%d", i, role, nd.Offset))
		}
	}
	role := "slave"
	if led > 0 {
		role = "master"
	}
	return append([]string{"role:" + role, fmt.Sprintf("connected_slaves:%d", replicas),
		fmt.Sprintf("cluster_shards_led:%d", led), fmt.Sprintf("cluster_shards_followed:%d", followed)}, lines...)
}
