package topology

import "errors"

// Sentinel errors. Functions wrap them with detail; match with errors.Is.
var (
	// ErrEmptyNodeID reports a node with an empty ID.
	ErrEmptyNodeID = errors.New("topology: empty node ID")
	// ErrDuplicateNode reports a node ID that is already a member, or that
	// appears twice in one call.
	ErrDuplicateNode = errors.New("topology: duplicate node")
	// ErrUnknownNode reports a node ID that is not a member of the ring.
	ErrUnknownNode = errors.New("topology: unknown node")
	// ErrInvalidWeight reports a node weight below 1 or above MaxWeight.
	ErrInvalidWeight = errors.New("topology: weight must be between 1 and MaxWeight")
	// ErrInvalidState reports a node state other than Live or Down.
	ErrInvalidState = errors.New("topology: invalid node state")
	// ErrInvalidCount reports a request for fewer than one owner.
	ErrInvalidCount = errors.New("topology: owner count must be at least 1")
	// ErrNoLiveNodes reports a placement on a ring with no live node.
	ErrNoLiveNodes = errors.New("topology: no live nodes")
	// ErrInvalidOptions reports Options out of range.
	ErrInvalidOptions = errors.New("topology: invalid options")
	// ErrTooManyPoints reports a membership whose ring would exceed MaxPoints
	// virtual nodes.
	ErrTooManyPoints = errors.New("topology: too many ring points")
	// ErrMalformed reports an encoded membership that Decode cannot accept.
	ErrMalformed = errors.New("topology: malformed membership encoding")
)
