package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
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

// blobsComponent is /blob's store as a backup component ("blobs"): its
// buckets, each object a file replaced whole by a rename, so a copy of
// the file opened is one version of it. Uploads in progress and
// temporary files are left out.
type blobsComponent struct{ dir string }

func (blobsComponent) Name() string { return "blobs" }

func (c blobsComponent) Hold(ctx context.Context) (backup.Held, error) {
	// Blobs deleted meanwhile are left out (MayVanish), as deleted
	// before the backup's cut; so is what vanishes under the walk.
	h := backup.Held{Dir: c.dir, Release: func() {}, MayVanish: true}
	root := filepath.Join(c.dir, "buckets")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p != root && errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case !d.Type().IsRegular():
			return nil
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		// Size -1: the size of the file the backup opens.
		h.Files = append(h.Files, backup.File{Path: filepath.ToSlash(rel), Size: -1})
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // no blob yet
	}
	return h, err
}
