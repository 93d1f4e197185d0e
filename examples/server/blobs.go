package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/blob"
)

// openBlobs opens the blob store /blob serves, in <data>/blobs, and sweeps
// it every --blob-sweep. The function it returns stops the sweeps and
// closes the store.
func openBlobs(ctx context.Context, c *config, log *slog.Logger) (*blob.Store, func() error, error) {
	bs, err := blob.Open(filepath.Join(c.dataDir, "blobs"), blob.Options{MaxSize: c.blobMaxSize, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.blobSweep > 0 {
			sweepBlobs(ctx, bs, c.blobSweep, log)
		}
	}()
	return bs, func() error {
		cancel()
		<-done
		return bs.Close()
	}, nil
}

func sweepBlobs(ctx context.Context, bs *blob.Store, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := bs.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("blob sweep", "err", err)
		case rep.Uploads+rep.Blobs > 0:
			log.Info("blob sweep", "uploads_removed", rep.Uploads, "contents_removed", rep.Blobs, "bytes", rep.Bytes)
		}
	}
}
