package wal

import "fmt"

// FileSpan is a prefix of one of a log's segment files.
type FileSpan struct {
	// Name is the file's name in the log's directory.
	Name string
	// Size is the length of the prefix.
	Size int64
}

// Files returns the segment files, oldest first, each with the length of
// the prefix that holds the records up to index last: copied into an empty
// directory, those prefixes open as a log of the records FirstIndex..last.
// Segments are append-only, so the prefixes do not change while later
// records are appended; a TruncateFront after the call may delete a file,
// which a copier holding it open still reads. last must have been written
// (Sync first for it to be on stable storage).
func (l *Log) Files(last uint64) ([]FileSpan, error) {
	l.mu.Lock()
	closed, written := l.closed, l.written
	l.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if last > written {
		return nil, fmt.Errorf("%w: Files(%d) past the last written index %d", ErrInvalidIndex, last, written)
	}
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	if len(l.segs) == 0 {
		return nil, ErrClosed
	}
	if last+1 < l.segs[0].first {
		return nil, fmt.Errorf("%w: Files(%d) before the first index %d", ErrInvalidIndex, last, l.segs[0].first)
	}
	var out []FileSpan
	for _, s := range l.segs {
		if s.first > last && len(out) > 0 {
			break
		}
		size := s.end
		if n := int(last - s.first); last >= s.first && n < len(s.offsets) {
			size = s.recordEnd(n)
		} else if last < s.first {
			// An empty log before its first record: the header alone.
			size = segmentHeaderSize
		}
		out = append(out, FileSpan{Name: s.name, Size: size})
	}
	return out, nil
}
