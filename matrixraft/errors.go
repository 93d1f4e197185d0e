package matrixraft

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrStopped is returned by every call on a stopped Node.
	ErrStopped = errors.New("matrixraft: node stopped")
	// ErrNotLeader is matched by *NotLeaderError: the call needs the leader.
	ErrNotLeader = errors.New("matrixraft: not the leader")
	// ErrProposalDropped is returned when raft refused a proposal (no
	// leader, too many uncommitted bytes, a conf change pending). The
	// proposal was not appended; retrying is safe.
	ErrProposalDropped = errors.New("matrixraft: proposal dropped")
	// ErrUnknownOutcome is returned by Propose, ProposeSession and the
	// membership calls when leadership changed while the proposal waited:
	// the new leader may or may not commit it, and this call will not
	// learn which. Retry through a session (ProposeSession with the same
	// client and sequence) to have it applied exactly once.
	ErrUnknownOutcome = errors.New("matrixraft: leadership changed; the proposal may or may not be applied")
	// ErrRemoved is returned once this node has been removed from the
	// cluster.
	ErrRemoved = errors.New("matrixraft: node removed from the cluster")
	// ErrIDReused is returned for a membership change that would add an ID
	// that was removed before. Node IDs are never reused.
	ErrIDReused = errors.New("matrixraft: node ID was removed before and cannot be reused")
	// ErrConfChangeRejected is returned when an applied membership change
	// was rejected by the deterministic checks on apply.
	ErrConfChangeRejected = errors.New("matrixraft: membership change rejected")
	// ErrSessionExpired is returned for a session proposal whose sequence
	// number is older than the last one applied for its client: its result
	// is no longer kept.
	ErrSessionExpired = errors.New("matrixraft: session sequence already superseded")
	// ErrInvalidOptions is wrapped by Validate's errors.
	ErrInvalidOptions = errors.New("matrixraft: invalid options")
	// ErrCorrupt is returned for a damaged snapshot file or log record.
	ErrCorrupt = errors.New("matrixraft: corrupt data")
	// ErrNoSnapshot is returned when the snapshot a log names is missing.
	ErrNoSnapshot = errors.New("matrixraft: snapshot file missing")
	// ErrFrameTooLarge is wrapped by a transport's error for a frame over
	// its size limit (tcptransport.ErrFrameTooLarge).
	ErrFrameTooLarge = errors.New("matrixraft: frame too large")
	// ErrGroupInUse is returned by Host.Storage and Host.StartNode for a
	// group that is already open on the host.
	ErrGroupInUse = errors.New("matrixraft: group already open on this host")
	// ErrHostClosed is returned by a closed Host.
	ErrHostClosed = errors.New("matrixraft: host closed")
	// ErrTransferFailed is returned when a leader transfer did not complete
	// before its context ended.
	ErrTransferFailed = errors.New("matrixraft: leader transfer did not complete")
)

// NotLeaderError says this node is not the leader, with the leader it
// knows of (0 when none). It matches ErrNotLeader.
type NotLeaderError struct {
	// Leader is the ID of the current leader as far as this node knows, or
	// 0 when it knows of none.
	Leader uint64
}

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return "matrixraft: not the leader; no leader known"
	}
	return fmt.Sprintf("matrixraft: not the leader; leader is %d", e.Leader)
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }
