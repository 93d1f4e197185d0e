package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// ManifestName is the manifest's name in a backup.
const ManifestName = "MANIFEST.json"

// manifestFormat is the format of the manifests this package writes.
const manifestFormat = 1

// Errors of backups and restores, matched with errors.Is.
var (
	// ErrIncomplete is returned for a backup with no manifest: it did not
	// finish.
	ErrIncomplete = errors.New("backup: incomplete backup (no manifest): it did not finish")
	// ErrChecksum is returned when a file of a backup is not the size or
	// hash its manifest records.
	ErrChecksum = errors.New("backup: checksum mismatch")
	// ErrNotEmpty is returned by Restore into a directory that holds
	// anything, and by a target that holds a backup already.
	ErrNotEmpty = errors.New("backup: destination is not empty")
	// ErrManifest is returned for a manifest that does not parse or names
	// a file outside the backup.
	ErrManifest = errors.New("backup: invalid manifest")
	// ErrRunning is returned by Manager.Start while a backup runs.
	ErrRunning = errors.New("backup: a backup is already running")
)

// File is one file of a backup.
type File struct {
	// Path is the file's path in the engine's directory, slash separated.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// XXH64 is the file's XXH64 (seed 0) in hex, as xxhsum -H1 prints
	// it: a checksum against damage, at several times SHA-256's speed.
	XXH64 string `json:"xxh64"`
}

// Manifest describes a finished backup.
type Manifest struct {
	Format  int       `json:"format"`
	Created time.Time `json:"created"`
	// Took is how long the copy took.
	Took  time.Duration `json:"took_ns"`
	Bytes int64         `json:"bytes"`
	// Components are the data directory's parts the backup holds, each a
	// directory ("engine", "streams").
	Components []string `json:"components"`
	Files      []File   `json:"files"`
	// Shards are the shards the backup holds, each with the last log
	// record it covers.
	Shards []temporalstore.BackupShard `json:"shards"`
}

func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("%w: format %d (this build reads %d)", ErrManifest, m.Format, manifestFormat)
	}
	comps := map[string]bool{}
	for _, c := range m.Components {
		if c == "" || strings.ContainsAny(c, "/\\") || !filepath.IsLocal(c) || comps[c] {
			return nil, fmt.Errorf("%w: component %q", ErrManifest, c)
		}
		comps[c] = true
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if comp, _, _ := strings.Cut(f.Path, "/"); !comps[comp] {
			return nil, fmt.Errorf("%w: file %q is in no component", ErrManifest, f.Path)
		}
		p := filepath.FromSlash(f.Path)
		if f.Path == "" || !filepath.IsLocal(p) || f.Path == ManifestName || f.Size < 0 || len(f.XXH64) != 16 || seen[f.Path] {
			return nil, fmt.Errorf("%w: file %q", ErrManifest, f.Path)
		}
		seen[f.Path] = true
	}
	return &m, nil
}
