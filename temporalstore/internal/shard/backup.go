package shard

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// ErrBackupUnsupported is returned by HoldForBackup for a shard whose log
// is not kept in files (storage.FileLog): a replicated or in-memory one.
var ErrBackupUnsupported = errors.New("shard: the log is not kept in files a backup can copy")

// BackupPoint is what a backup copies of a shard: a checkpoint and the log
// files' prefixes that complete it, all in the shard's directory. Opened
// from those files alone, the shard holds every record up to Last.
type BackupPoint struct {
	// Dir is the shard's directory.
	Dir string
	// Image is the checkpoint's file name; Applied the index it covers.
	Image   string
	Applied uint64
	// Last is the last record the copy holds: every write acknowledged
	// before HoldForBackup was called is at or before it.
	Last uint64
	// Files are the log's files with the prefix of each to copy.
	Files []storage.File
}

// HoldForBackup writes a checkpoint, syncs the log and returns the files a
// backup copies; until release is called the shard removes no log segment
// and no checkpoint, so the files stay as named (a copier may release as
// soon as it has opened them). Writes go on meanwhile.
func (s *Shard) HoldForBackup(ctx context.Context) (BackupPoint, func(), error) {
	fl, ok := s.log.(storage.FileLog)
	if !ok {
		return BackupPoint{}, nil, ErrBackupUnsupported
	}
	// Taking the lock waits out a reclamation under way.
	s.reclaimMu.Lock()
	s.backupHolds.Add(1)
	s.reclaimMu.Unlock()
	var once sync.Once
	release := func() { once.Do(func() { s.backupHolds.Add(-1) }) }
	p, err := s.backupPoint(ctx, fl)
	if err != nil {
		release()
		return BackupPoint{}, nil, err
	}
	return p, release, nil
}

func (s *Shard) backupPoint(ctx context.Context, fl storage.FileLog) (BackupPoint, error) {
	// Acknowledged writes are in the log: the last index read now, once
	// synced, covers every one of them.
	last := s.log.LastIndex()
	applied, err := s.Checkpoint(ctx)
	if err != nil {
		return BackupPoint{}, err
	}
	// The checkpoint synced the log up to where it was applied; an async
	// table's later records are synced here.
	if err := s.log.Sync(ctx); err != nil {
		return BackupPoint{}, fmt.Errorf("shard: backup: %w", err)
	}
	last = max(last, applied)
	files, err := fl.Files(last)
	if err != nil {
		return BackupPoint{}, fmt.Errorf("shard: backup: %w", err)
	}
	return BackupPoint{Dir: s.dir, Image: filepath.Base(imagePath(s.dir, applied)), Applied: applied, Last: last, Files: files}, nil
}
