package benchkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// ErrNoRepoRoot is returned by RepoRoot when no directory from the start
// upwards holds a go.work file.
var ErrNoRepoRoot = errors.New("benchkit: no go.work found above the working directory")

// RepoRoot walks up from dir to the repository root of this monorepo: the
// first directory that holds a go.work and no go.mod (tools/ holds both:
// its workspace of its own).
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.work")); err == nil && !fi.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); errors.Is(err, os.ErrNotExist) {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoRepoRoot
		}
		dir = parent
	}
}

// ResultPath returns <repo root>/bench-results/<name>.json, finding the
// root from the working directory. Without a go.work above it, the
// bench-results directory is placed in the working directory.
func ResultPath(name string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := RepoRoot(wd)
	if errors.Is(err, ErrNoRepoRoot) {
		root = wd
	} else if err != nil {
		return "", err
	}
	return filepath.Join(root, "bench-results", name+".json"), nil
}

// WriteJSON writes v as indented JSON to path, creating the parent directory
// and replacing the file atomically (write to a temporary file, rename).
// Non-finite floats (NaN, ±Inf) are written as null, since JSON has no
// spelling for them; use Float for fields that may hold them.
func WriteJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Float is a float64 that marshals NaN and ±Inf as JSON null.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// MarshalJSON writes a Summary with non-finite values as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Min    Float `json:"min"`
		Median Float `json:"median"`
		Max    Float `json:"max"`
	}{Float(s.Min), Float(s.Median), Float(s.Max)})
}
