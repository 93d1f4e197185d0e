package ferricstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
)

// RestoreMarker is the file a restore writes first into the directory it
// fills and removes last (temporalstore's backup package writes it): Open
// refuses a directory holding it.
const RestoreMarker = "RESTORE-IN-PROGRESS"

// ErrRestoreIncomplete is returned by Open for a directory a restore has
// not finished filling.
var ErrRestoreIncomplete = errors.New("ferricstore: the directory holds an unfinished restore")

// BackupFile is a prefix of a file under the store's directory.
type BackupFile struct {
	// Path is relative to Options.Dir, slash separated.
	Path string
	Size int64
}

// HoldForBackup names what a backup copies: each shard's newest snapshot
// and its log's prefix up to the last record, synced; opened in an empty
// directory, those files are the store as it was, every acknowledged
// write before the call included. Until release no shard writes a
// snapshot or drops a log segment, so the files stay as named; writes go
// on.
func (st *Store) HoldForBackup(ctx context.Context) ([]BackupFile, func(), error) {
	if st.closed.Load() {
		return nil, nil, ErrClosed
	}
	var releases []func()
	release := func() {
		for _, r := range releases {
			r()
		}
	}
	var out []BackupFile
	for _, s := range st.shards {
		files, r, err := s.holdForBackup(ctx)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("ferricstore: backup of shard %d: %w", s.id, err)
		}
		releases = append(releases, r)
		out = append(out, files...)
	}
	var once sync.Once
	return out, func() { once.Do(release) }, nil
}

func (s *shard) holdForBackup(ctx context.Context) ([]BackupFile, func(), error) {
	// Taking the lock waits out a snapshot being written.
	s.backupMu.Lock()
	s.backupHolds.Add(1)
	// The snapshot the shard loaded or last wrote; none before the first.
	snapIndex := s.snapIndex
	s.backupMu.Unlock()
	release := func() { s.backupHolds.Add(-1) }
	rel := func(p string) string {
		r, _ := filepath.Rel(s.store.opts.Dir, p)
		return filepath.ToSlash(r)
	}
	var out []BackupFile
	if snapIndex > 0 {
		p := filepath.Join(s.snapDir, snapshotName(snapIndex))
		fi, err := os.Stat(p)
		if err != nil {
			release()
			return nil, nil, err
		}
		out = append(out, BackupFile{Path: rel(p), Size: fi.Size()})
	}
	last := s.log.LastIndex()
	if err := s.log.Sync(ctx); err != nil {
		release()
		return nil, nil, err
	}
	spans, err := s.log.Files(last)
	if err != nil {
		release()
		return nil, nil, err
	}
	for _, sp := range spans {
		out = append(out, BackupFile{Path: path.Join(rel(s.logDir), sp.Name), Size: sp.Size})
	}
	return out, release, nil
}
