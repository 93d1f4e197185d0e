package largelog

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"lukechampine.com/blake3"
)

// DirReport is what CheckDir found in a log's directory.
type DirReport struct {
	// Files and Bytes count the large files read.
	Files int
	Bytes int64
	// Damaged names the files whose bytes do not hash to their names;
	// Temporary the leftovers of writes a crash cut (open removes them).
	Damaged, Temporary []string
}

// CheckDir reads every large file in dir, the directory of a log Wrap
// opened, and checks it against the hash its name holds (BLAKE3, or the
// SHA-256 of a file written before BLAKE3). It changes nothing and takes
// no lock: an offline check of a data directory (tsctl verify). progress,
// if set, is told the bytes read as they are.
func CheckDir(dir string, progress func(n int64)) (DirReport, error) {
	var rep DirReport
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rep, err
	}
	buf := make([]byte, 1<<20)
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir() || !strings.HasPrefix(name, "large-"):
			continue
		case strings.HasSuffix(name, ".tmp"):
			rep.Temporary = append(rep.Temporary, name)
			continue
		case !strings.HasSuffix(name, ".rec"):
			continue
		}
		want, err := hex.DecodeString(strings.TrimSuffix(strings.TrimPrefix(name, "large-"), ".rec"))
		if err != nil || len(want) != blake3Size {
			rep.Damaged = append(rep.Damaged, name)
			continue
		}
		path := filepath.Join(dir, name)
		b3 := blake3.New(blake3Size, nil)
		n, err := hashFile(path, io.MultiWriter(b3, progressWriter(progress)), buf)
		if err != nil {
			return rep, err
		}
		rep.Files++
		rep.Bytes += n
		if string(b3.Sum(nil)) == string(want) {
			continue
		}
		// A file written before BLAKE3, or a damaged one.
		s2 := sha256.New()
		if _, err := hashFile(path, s2, buf); err != nil {
			return rep, err
		}
		if string(s2.Sum(nil)) != string(want) {
			rep.Damaged = append(rep.Damaged, name)
		}
	}
	return rep, nil
}

// hashFile copies the file at path to h.
func hashFile(path string, h io.Writer, buf []byte) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.CopyBuffer(h, f, buf)
}

// progressWriter counts what is written to it into progress.
type progressWriter func(n int64)

func (p progressWriter) Write(b []byte) (int, error) {
	if p != nil {
		p(int64(len(b)))
	}
	return len(b), nil
}
