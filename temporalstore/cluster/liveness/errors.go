package liveness

import "errors"

var (
	// ErrInvalid is returned for options or arguments out of range.
	ErrInvalid = errors.New("liveness: invalid argument")
	// ErrUnknownMember is returned for a report by or about a node that is
	// not a member of the jury.
	ErrUnknownMember = errors.New("liveness: unknown member")
	// ErrWouldOrphan is returned by CheckRemoval when a shard would be
	// left with no live voter.
	ErrWouldOrphan = errors.New("liveness: would orphan a shard")
	// ErrBelowQuorum is returned by CheckRemoval when a shard would be
	// left with fewer live voters than a majority of its voters.
	ErrBelowQuorum = errors.New("liveness: would leave a shard below quorum")
)
