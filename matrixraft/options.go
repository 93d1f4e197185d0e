package matrixraft

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Peer is a cluster member: its raft ID and its transport address.
type Peer struct {
	ID   uint64
	Addr string
}

// Defaults applied to zero-valued Options fields.
const (
	DefaultTickInterval              = 100 * time.Millisecond
	DefaultElectionTick              = 10
	DefaultHeartbeatTick             = 1
	DefaultMaxSizePerMsg             = 1 << 20
	DefaultMaxInflightMsgs           = 256
	DefaultMaxUncommittedEntriesSize = 64 << 20
	DefaultMaxInflightProposals      = 4096
	DefaultSnapshotEntries           = 10000
	DefaultCatchUpEntries            = 5000
	DefaultReadRetryTicks            = 5
	DefaultMaxSessions               = 10000
)

// Options configures a Node. ID, Dir, StateMachine and Transport are
// required.
type Options struct {
	// ID is this node's raft ID: non-zero, and never reused for another
	// node of the cluster.
	ID uint64
	// Dir holds this node's log and snapshots.
	Dir string
	// Peers bootstraps a new cluster with these voters (this node among
	// them). It is ignored when Dir already holds state. With no Peers and
	// no state the node starts empty and waits to be added by the leader
	// (a join).
	Peers []Peer
	// ForceNewCluster recovers a group that lost its quorum: from this
	// node's stored state (Dir must hold some), it restarts as the only
	// voter. Entries after the stored commit index are discarded, and
	// committed membership changes removing every other member are
	// appended and applied, so their IDs are never reused; the node then
	// elects itself and new members can be added. Only committed data
	// survives. Set it for one restart of one survivor and never while the
	// old members may still run: they would form a second cluster.
	// Restarting again with it set changes nothing once this node is the
	// only member. Default: false.
	ForceNewCluster bool
	// StateMachine receives committed commands.
	StateMachine StateMachine
	// Transport carries raft messages. The node starts it and closes it on
	// Stop.
	Transport Transport

	// TickInterval is the raft tick. Default: 100 ms.
	TickInterval time.Duration
	// ManualTick turns the ticker off: the caller drives time with
	// Node.Tick. For deterministic tests. Default: false.
	ManualTick bool
	// ElectionTick is the election timeout in ticks. Default: 10.
	ElectionTick int
	// HeartbeatTick is the heartbeat interval in ticks. Default: 1.
	HeartbeatTick int
	// DisablePreVote turns raft's PreVote off. Default: PreVote on.
	DisablePreVote bool
	// DisableCheckQuorum turns CheckQuorum off. Default: CheckQuorum on.
	DisableCheckQuorum bool
	// LeaseReads serves linearizable reads from the leader's lease instead
	// of a heartbeat round; it needs CheckQuorum and bounded clock drift.
	// Default: false.
	LeaseReads bool
	// MaxSizePerMsg bounds an append message. Default: 1 MiB.
	MaxSizePerMsg uint64
	// MaxInflightMsgs bounds append messages in flight per follower.
	// Default: 256.
	MaxInflightMsgs int
	// MaxUncommittedEntriesSize bounds the bytes of uncommitted entries on
	// the leader; proposals beyond it are dropped. Default: 64 MiB.
	MaxUncommittedEntriesSize uint64
	// MaxInflightProposals bounds the Propose calls waiting for apply on
	// this node; more calls block until one finishes (backpressure).
	// Default: 4096.
	MaxInflightProposals int
	// SnapshotEntries is how many entries are applied between snapshots.
	// Default: 10000.
	SnapshotEntries uint64
	// CatchUpEntries is how many entries before a snapshot stay in memory
	// for slow followers. Default: 5000.
	CatchUpEntries uint64
	// ReadRetryTicks is how many ticks a ReadIndex request waits before it
	// is re-sent with a fresh ID. Default: 5.
	ReadRetryTicks int
	// MaxSessions bounds the client sessions kept for exactly-once
	// proposals; the least recently used is forgotten first. Default: 10000.
	MaxSessions int
	// AsyncStorageWrites runs raft with AsyncStorageWrites: the log is
	// written by a goroutine of its own while the Ready loop goes on
	// taking Readys, sending and applying, so proposals keep batching
	// during an fsync. Messages that promise durability still leave only
	// after it. Default: false (the synchronous Ready loop).
	AsyncStorageWrites bool
	// Storage configures the durable log. Default: see StorageOptions.
	Storage StorageOptions
	// Logger receives lifecycle events. Default: discards them.
	Logger *slog.Logger

	// beforeSave, when set, runs before each Ready is persisted (tests:
	// slow disk).
	beforeSave func()
}

func (o Options) withDefaults() Options {
	if o.TickInterval == 0 {
		o.TickInterval = DefaultTickInterval
	}
	if o.ElectionTick == 0 {
		o.ElectionTick = DefaultElectionTick
	}
	if o.HeartbeatTick == 0 {
		o.HeartbeatTick = DefaultHeartbeatTick
	}
	if o.MaxSizePerMsg == 0 {
		o.MaxSizePerMsg = DefaultMaxSizePerMsg
	}
	if o.MaxInflightMsgs == 0 {
		o.MaxInflightMsgs = DefaultMaxInflightMsgs
	}
	if o.MaxUncommittedEntriesSize == 0 {
		o.MaxUncommittedEntriesSize = DefaultMaxUncommittedEntriesSize
	}
	if o.MaxInflightProposals == 0 {
		o.MaxInflightProposals = DefaultMaxInflightProposals
	}
	if o.SnapshotEntries == 0 {
		o.SnapshotEntries = DefaultSnapshotEntries
	}
	if o.CatchUpEntries == 0 {
		o.CatchUpEntries = DefaultCatchUpEntries
	}
	if o.ReadRetryTicks == 0 {
		o.ReadRetryTicks = DefaultReadRetryTicks
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o Options) Validate() error {
	switch {
	case o.ID == 0:
		return fmt.Errorf("%w: ID must be non-zero", ErrInvalidOptions)
	case o.Dir == "":
		return fmt.Errorf("%w: Dir is required", ErrInvalidOptions)
	case o.StateMachine == nil:
		return fmt.Errorf("%w: StateMachine is required", ErrInvalidOptions)
	case o.Transport == nil:
		return fmt.Errorf("%w: Transport is required", ErrInvalidOptions)
	case o.HeartbeatTick <= 0 || o.ElectionTick <= o.HeartbeatTick:
		return fmt.Errorf("%w: ElectionTick %d must exceed HeartbeatTick %d", ErrInvalidOptions, o.ElectionTick, o.HeartbeatTick)
	case o.LeaseReads && o.DisableCheckQuorum:
		return fmt.Errorf("%w: LeaseReads needs CheckQuorum", ErrInvalidOptions)
	case o.TickInterval < 0 || o.MaxInflightProposals < 0 || o.MaxSessions < 0 || o.ReadRetryTicks < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalidOptions)
	}
	for _, p := range o.Peers {
		if p.ID == 0 {
			return fmt.Errorf("%w: peer ID 0", ErrInvalidOptions)
		}
	}
	return o.Storage.withDefaults().Validate()
}
