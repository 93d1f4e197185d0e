package tcptransport

import (
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrInvalidOptions is wrapped by Validate's errors.
	ErrInvalidOptions = errors.New("tcptransport: invalid options")
	// ErrClosed is returned by Start after Close (the Transport's, or the
	// group's own).
	ErrClosed = errors.New("tcptransport: closed")
	// ErrStarted is returned by a second Start, and by the Start of a group
	// already started on the same Transport.
	ErrStarted = errors.New("tcptransport: already started")
	// ErrInvalidGroup is returned by the Start of Group(0): group 0 stands
	// for the Transport itself.
	ErrInvalidGroup = errors.New("tcptransport: invalid group ID")
	// ErrFrameTooLarge is returned for a frame whose payload is over
	// Options.MaxMessageSize; the connection carrying it is dropped. On the
	// sending side such a message is dropped and counted. It wraps
	// matrixraft.ErrFrameTooLarge, so code that sees only the Transport
	// interface can match it.
	ErrFrameTooLarge = fmt.Errorf("tcptransport: %w", matrixraft.ErrFrameTooLarge)
	// ErrSnapshotTooLarge is returned for a snapshot stream announcing more
	// than Options.MaxSnapshotSize bytes.
	ErrSnapshotTooLarge = errors.New("tcptransport: snapshot too large")
	// ErrCorruptFrame is returned for a frame with an unknown version or
	// type, a checksum mismatch or a malformed payload.
	ErrCorruptFrame = errors.New("tcptransport: corrupt frame")
	// ErrWrongPeer is returned when a connection's hello names another
	// receiver than this node: the peer's address book is out of date.
	ErrWrongPeer = errors.New("tcptransport: connection addressed to another node")
)
