package wal

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const segmentExt = ".wal"

// segment is one segment file. offsets and end change only under Log.segMu.
type segment struct {
	first   uint64
	name    string
	f       *os.File
	offsets []uint32 // offset of each record
	end     int64    // offset just past the last record
	closed  bool     // file closed by a truncation; under Log.syncMu
	df      *os.File // O_DIRECT descriptor while this is the active segment
}

func segmentName(first uint64) string { return fmt.Sprintf("%020d%s", first, segmentExt) }

func parseSegmentName(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(base) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(base, 10, 64)
	return n, err == nil
}

// recordEnd returns the offset just past record i of s.
func (s *segment) recordEnd(i int) int64 {
	if i+1 < len(s.offsets) {
		return int64(s.offsets[i+1])
	}
	return s.end
}

// syncDir makes creates, renames and deletes in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// readWhole reads f into buf, growing it as needed.
func readWhole(f *os.File, buf []byte) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return buf, err
	}
	size := int(fi.Size())
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return buf, err
	}
	return buf, nil
}

// cut drops everything from off on, leaving zeros (or nothing) behind, and
// makes the change durable.
func cutFile(f *os.File, off, size int64, prealloc bool) error {
	if err := f.Truncate(off); err != nil {
		return err
	}
	if prealloc && size > off {
		if err := preallocate(f, size); err != nil {
			return err
		}
	}
	return f.Sync()
}

// createSegmentFile writes a new segment atomically: header and
// preallocation under a temporary name, fsync, rename, fsync of the
// directory. An existing segment of the same name is replaced.
func createSegmentFile(dir string, h segmentHeader, size int64, prealloc bool) (*segment, error) {
	name := segmentName(h.first)
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*segment, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("wal: create segment %s: %w", name, err)
	}
	if _, err := f.WriteAt(encodeSegmentHeader(h), 0); err != nil {
		return fail(err)
	}
	if prealloc {
		if err := preallocate(f, size); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: create segment %s: %w", name, err)
	}
	return &segment{first: h.first, name: name, f: f, end: segmentHeaderSize}, nil
}
