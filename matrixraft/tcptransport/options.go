package tcptransport

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Defaults applied to zero-valued Options fields.
const (
	// DefaultMaxMessageSize bounds one frame: far above raft's 1 MiB
	// MaxSizePerMsg default, yet small enough that a corrupt length cannot
	// make a reader allocate much.
	DefaultMaxMessageSize = 64 << 20
	// DefaultMaxSnapshotSize bounds the snapshot data one stream may
	// announce.
	DefaultMaxSnapshotSize = 8 << 30
	// DefaultQueueSize is the per-peer outbound queue length, in messages.
	DefaultQueueSize = 4096
	// DefaultSnapshotQueueSize is how many snapshots may wait per peer.
	DefaultSnapshotQueueSize = 4
	// DefaultSnapshotChunkSize is the data carried by one snapshot frame.
	DefaultSnapshotChunkSize = 1 << 20
	// DefaultWriteBufferSize is the per-connection write buffer: queued
	// messages are gathered into it and flushed together.
	DefaultWriteBufferSize = 64 << 10
	// DefaultDialTimeout bounds one connection attempt, TLS handshake
	// included.
	DefaultDialTimeout = 2 * time.Second
	// DefaultWriteTimeout bounds one flush to a peer; a peer that takes
	// longer (a stopped process with full buffers) loses its connection.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultSnapshotAckTimeout bounds the wait for a receiver to confirm a
	// snapshot once all its data is written.
	DefaultSnapshotAckTimeout = 30 * time.Second
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait between
	// reconnection attempts; it doubles after each failure.
	DefaultMinBackoff = 50 * time.Millisecond
	DefaultMaxBackoff = 1 * time.Second
)

// Options configures a Transport. ID and ListenAddr are required.
type Options struct {
	// ID is this node's raft ID. Outbound connections announce it, and an
	// inbound connection announcing another receiver is refused.
	ID uint64
	// ListenAddr is the TCP address to listen on, e.g. "127.0.0.1:7001";
	// port 0 picks a free port (see Transport.Addr).
	ListenAddr string

	// MaxMessageSize bounds a frame's payload, on both sides. A larger
	// outbound message is dropped and counted; a larger inbound frame
	// drops its connection. Default: 64 MiB.
	MaxMessageSize int
	// MaxSnapshotSize bounds the snapshot data a peer may stream to us.
	// Default: 8 GiB.
	MaxSnapshotSize int64
	// QueueSize is the per-peer outbound queue, in messages. When it is
	// full, Send drops the message and reports the peer unreachable.
	// Default: 4096.
	QueueSize int
	// SnapshotQueueSize is how many MsgSnap may wait per peer behind the
	// one being streamed; more fail at once (reported to raft).
	// Default: 4.
	SnapshotQueueSize int
	// SnapshotChunkSize is the snapshot data per frame. At most
	// MaxMessageSize. Default: 1 MiB.
	SnapshotChunkSize int
	// WriteBufferSize is the per-connection write buffer. Default: 64 KiB.
	WriteBufferSize int
	// DialTimeout bounds one connection attempt. Default: 2 s.
	DialTimeout time.Duration
	// WriteTimeout bounds one flush to a peer. Default: 5 s.
	WriteTimeout time.Duration
	// SnapshotAckTimeout bounds the wait for a snapshot's acknowledgement.
	// Default: 30 s.
	SnapshotAckTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts. Defaults: 50 ms and 1 s.
	MinBackoff time.Duration
	MaxBackoff time.Duration

	// ServerTLS, when set, makes the listener speak TLS; set ClientAuth and
	// ClientCAs to require peer certificates. ClientTLS, when set, is used
	// to dial peers; an empty ServerName is taken from the peer's address.
	// Both or neither must be set. Default: plain TCP.
	ServerTLS *tls.Config
	ClientTLS *tls.Config

	// Logger receives connection events. Default: discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.MaxSnapshotSize == 0 {
		o.MaxSnapshotSize = DefaultMaxSnapshotSize
	}
	if o.QueueSize == 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.SnapshotQueueSize == 0 {
		o.SnapshotQueueSize = DefaultSnapshotQueueSize
	}
	if o.SnapshotChunkSize == 0 {
		o.SnapshotChunkSize = min(DefaultSnapshotChunkSize, o.MaxMessageSize)
	}
	if o.WriteBufferSize == 0 {
		o.WriteBufferSize = DefaultWriteBufferSize
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.SnapshotAckTimeout == 0 {
		o.SnapshotAckTimeout = DefaultSnapshotAckTimeout
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports whether the options, after defaults, are usable.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.ID == 0:
		return fmt.Errorf("%w: ID must be non-zero", ErrInvalidOptions)
	case o.ListenAddr == "":
		return fmt.Errorf("%w: ListenAddr is required", ErrInvalidOptions)
	case o.MaxMessageSize < 0 || o.MaxMessageSize > 1<<31:
		return fmt.Errorf("%w: MaxMessageSize %d out of range (0, 2 GiB]", ErrInvalidOptions, o.MaxMessageSize)
	case o.SnapshotChunkSize < 0 || o.SnapshotChunkSize > o.MaxMessageSize:
		return fmt.Errorf("%w: SnapshotChunkSize %d must be in (0, MaxMessageSize %d]", ErrInvalidOptions, o.SnapshotChunkSize, o.MaxMessageSize)
	case o.MaxSnapshotSize < 0 || o.QueueSize < 0 || o.SnapshotQueueSize < 0 || o.WriteBufferSize < 0:
		return fmt.Errorf("%w: negative size", ErrInvalidOptions)
	case o.DialTimeout < 0 || o.WriteTimeout < 0 || o.SnapshotAckTimeout < 0 || o.MinBackoff < 0:
		return fmt.Errorf("%w: negative duration", ErrInvalidOptions)
	case o.MaxBackoff < o.MinBackoff:
		return fmt.Errorf("%w: MaxBackoff %v below MinBackoff %v", ErrInvalidOptions, o.MaxBackoff, o.MinBackoff)
	case (o.ServerTLS == nil) != (o.ClientTLS == nil):
		return fmt.Errorf("%w: set both ServerTLS and ClientTLS, or neither", ErrInvalidOptions)
	}
	return nil
}
