package temporalstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// RestoreMarker is the file a restore writes first into the directory it
// fills and removes last: Open refuses a directory holding it.
const RestoreMarker = "RESTORE-IN-PROGRESS"

// ErrRestoreIncomplete is returned by Open for a directory a restore has
// not finished filling (it holds RestoreMarker): restore it again.
var ErrRestoreIncomplete = errors.New("temporalstore: the directory holds an unfinished restore")

// ErrBackupUnsupported is returned by HoldForBackup when a shard's log is
// not kept in local files (a replicated or in-memory log).
var ErrBackupUnsupported = shard.ErrBackupUnsupported

// BackupFile is a prefix of a file in a shard's directory.
type BackupFile struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// BackupShard is what a backup copies of one shard: a checkpoint and the
// log files' prefixes that complete it, in Dir.
type BackupShard struct {
	Namespace string `json:"namespace"`
	Table     string `json:"table"`
	Shard     int    `json:"shard"`
	// Dir is the shard's directory relative to the engine's, slash
	// separated.
	Dir string `json:"dir"`
	// Image is the checkpoint's file name, Applied the index it covers.
	Image   string `json:"image"`
	Applied uint64 `json:"applied"`
	// Last is the last log record the copy holds.
	Last  uint64       `json:"last"`
	Files []BackupFile `json:"files"`
}

// BackupSet is a consistent backup point of every shard: the engine's
// catalog as it was and, for each shard, the files that reopen it. Every
// write acknowledged before HoldForBackup was called is in it; one made
// meanwhile may be in its shard's copy or not. The files stay as named
// until Release; writes go on.
type BackupSet struct {
	// Dir is the engine's directory, which the shards' Dirs are under.
	Dir string
	// Files are the engine's files given whole, by name in Dir: the
	// catalog as it was and the tenants' limits.
	Files    map[string][]byte
	Shards   []BackupShard
	releases []func()
}

// Release lets the shards reclaim their logs again. It is idempotent.
func (b *BackupSet) Release() {
	for _, r := range b.releases {
		r()
	}
	b.releases = nil
}

// HoldForBackup checkpoints every shard of every table and returns what a
// backup copies (package backup copies it). Until Release no shard removes
// a log segment or checkpoint. It returns ErrBackupUnsupported for logs
// not kept in local files.
func (e *Engine) HoldForBackup(ctx context.Context) (*BackupSet, error) {
	type held struct {
		ns, name string
		shards   []*shard.Shard
	}
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	var tables []held
	for k, t := range e.tables {
		tables = append(tables, held{k.namespace, k.name, slices.Clone(t.shards)})
	}
	catalog, err := e.catalogLocked()
	e.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(tables, func(a, b held) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
	})
	set := &BackupSet{Dir: e.opts.Dir, Files: map[string][]byte{catalogFile: catalog}}
	if own := e.TenantLimits(); len(own) > 0 {
		b, err := json.MarshalIndent(own, "", "  ")
		if err != nil {
			return nil, err
		}
		set.Files[tenantsFile] = b
	}
	for _, t := range tables {
		for i, s := range t.shards {
			p, release, err := s.HoldForBackup(ctx)
			if err != nil {
				set.Release()
				if errors.Is(err, shard.ErrBackupUnsupported) {
					return nil, fmt.Errorf("%w: table %s/%s", ErrBackupUnsupported, t.ns, t.name)
				}
				return nil, fmt.Errorf("temporalstore: backup of %s/%s shard %d: %w", t.ns, t.name, i, err)
			}
			set.releases = append(set.releases, release)
			rel, err := filepath.Rel(e.opts.Dir, p.Dir)
			if err != nil {
				set.Release()
				return nil, err
			}
			bs := BackupShard{Namespace: t.ns, Table: t.name, Shard: i, Dir: filepath.ToSlash(rel),
				Image: p.Image, Applied: p.Applied, Last: p.Last}
			for _, f := range p.Files {
				bs.Files = append(bs.Files, BackupFile{Name: f.Name, Size: f.Size})
			}
			set.Shards = append(set.Shards, bs)
		}
	}
	return set, nil
}
