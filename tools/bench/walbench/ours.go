package walbench

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

// oursLog adapts our log. It is opened as a user would open it: the
// requested sync policy and interval, every other option at its default.
type oursLog struct {
	l *wal.Log
}

func oursOptions(o openOptions) wal.Options {
	opts := wal.Options{SyncInterval: o.Interval}
	switch o.Sync {
	case SyncAlways:
		opts.Sync = wal.SyncAlways
	case SyncInterval:
		opts.Sync = wal.SyncInterval
	case syncNever:
		opts.Sync = wal.SyncNever
	}
	return opts
}

func openOurs(dir string, o openOptions) (appender, error) {
	l, err := wal.Open(filepath.Join(dir, "wal"), oursOptions(o))
	if err != nil {
		return nil, err
	}
	return &oursLog{l: l}, nil
}

func (o *oursLog) Append(ctx context.Context, data []byte) error {
	_, err := o.l.Append(ctx, data)
	return err
}

func (o *oursLog) fsyncs() uint64 { return o.l.Stats().Fsyncs }

func (o *oursLog) Close() error { return o.l.Close() }

// oursEnvelope returns our log's bytes per record for payloads: the growth
// of Stats().Bytes (frames plus segment headers) over the appends. The
// records fit in the first segment, so no header is counted.
func oursEnvelope(dir string, payloads [][]byte) (float64, error) {
	l, err := wal.Open(filepath.Join(dir, "wal"), oursOptions(openOptions{Sync: syncNever}))
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	before := l.Stats()
	for _, p := range payloads {
		if _, err := l.Append(ctx, p); err != nil {
			l.Close()
			return 0, err
		}
	}
	after := l.Stats()
	if err := l.Close(); err != nil {
		return 0, err
	}
	if after.Segments != before.Segments {
		return 0, errors.New("envelope records spilled into a second segment; lower --envelope-records")
	}
	return float64(after.Bytes-before.Bytes) / float64(len(payloads)), nil
}
