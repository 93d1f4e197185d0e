package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// The layout of a server's data directory, as the server and the engine
// write it: <data>/engine holds catalog.json and, for each table, its
// directory (temporalstore.CatalogTable.Dir) of shard-NNNN directories, each with its
// checkpoints (checkpoint-<applied>.img) and its log's segments
// (<first index>.wal, and a LOCK while a process has the log open). Beside
// the engine: streams, objects and backups.

// dataSubdirs are the directories beside the engine's that inspect sizes.
var dataSubdirs = []string{"streams", "objects", "backups"}

// engineDir finds the engine's directory for the data directory data:
// data/engine, or data itself when it holds the catalog (an engine
// directory given directly, a restored copy, a directory backup).
func engineDir(data string) (string, error) {
	for _, d := range []string{filepath.Join(data, "engine"), data} {
		if _, err := os.Stat(filepath.Join(d, temporalstore.CatalogFile)); err == nil {
			return d, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	if _, err := os.Stat(data); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s holds no engine: neither %s nor %s exists", data,
		filepath.Join(data, "engine", temporalstore.CatalogFile), filepath.Join(data, temporalstore.CatalogFile))
}

// fileEntry is a checkpoint image or a log segment of a shard.
type fileEntry struct {
	Name string `json:"name"`
	// Index is the image's applied index, or the segment's first index.
	Index uint64 `json:"index"`
	Size  int64  `json:"size"`
}

// shardFiles is what a shard's directory holds.
type shardFiles struct {
	Shard int    `json:"shard"`
	Dir   string `json:"dir"`
	// Images (oldest first) and Segments (in index order).
	Images   []fileEntry `json:"images"`
	Segments []fileEntry `json:"segments"`
	// LargeBytes is the size of the large values' files (large-*.rec).
	LargeBytes int64 `json:"large_bytes"`
	// Bytes is the size of every file in the directory.
	Bytes int64 `json:"bytes"`
	// InUse is set when a process holds the shard's log open.
	InUse bool `json:"in_use,omitempty"`
	// Missing is set when the catalog's table has no such directory.
	Missing bool `json:"missing,omitempty"`
}

// parseIndexName parses prefix<20 digits>suffix.
func parseIndexName(name, prefix, suffix string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, suffix); !ok || len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// listShard lists the shard directory dir, reading no file.
func listShard(shard int, dir string) (shardFiles, error) {
	sf := shardFiles{Shard: shard, Dir: dir, Images: []fileEntry{}, Segments: []fileEntry{}}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		sf.Missing = true
		return sf, nil
	}
	if err != nil {
		return sf, err
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return sf, err
		}
		sf.Bytes += fi.Size()
		if n, ok := parseIndexName(e.Name(), "checkpoint-", ".img"); ok {
			sf.Images = append(sf.Images, fileEntry{e.Name(), n, fi.Size()})
		} else if n, ok := parseIndexName(e.Name(), "", ".wal"); ok {
			sf.Segments = append(sf.Segments, fileEntry{e.Name(), n, fi.Size()})
		} else if strings.HasPrefix(e.Name(), "large-") && strings.HasSuffix(e.Name(), ".rec") {
			sf.LargeBytes += fi.Size()
		}
	}
	byIndex := func(a, b fileEntry) int { return cmp.Compare(a.Index, b.Index) }
	slices.SortFunc(sf.Images, byIndex)
	slices.SortFunc(sf.Segments, byIndex)
	sf.InUse = lockHeld(filepath.Join(dir, "LOCK"))
	return sf, nil
}

// tableShards lists the shard directories of table c: those its options
// count, and any other shard-NNNN directory found beside them.
func tableShards(engine string, c temporalstore.CatalogTable) ([]shardFiles, error) {
	base := filepath.Join(engine, filepath.FromSlash(c.Dir))
	n := c.Options.Shards
	if ents, err := os.ReadDir(base); err == nil {
		for _, e := range ents {
			var i int
			if _, err := fmt.Sscanf(e.Name(), "shard-%04d", &i); err == nil && e.IsDir() && i >= n {
				n = i + 1
			}
		}
	}
	out := make([]shardFiles, 0, n)
	for i := range n {
		sf, err := listShard(i, filepath.Join(base, fmt.Sprintf("shard-%04d", i)))
		if err != nil {
			return nil, err
		}
		out = append(out, sf)
	}
	return out, nil
}

// dirUsage is the file count and size of a directory tree.
type dirUsage struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// Absent is set when the directory does not exist.
	Absent bool `json:"absent,omitempty"`
}

func usage(name, path string) (dirUsage, error) {
	u := dirUsage{Name: name, Path: path}
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		u.Files++
		u.Bytes += fi.Size()
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		u.Absent = true
		return u, nil
	}
	return u, err
}
