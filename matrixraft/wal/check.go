package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SegmentReport describes one segment file as Check found it.
type SegmentReport struct {
	// Name is the file's name; First the index of its first record.
	Name  string
	First uint64
	// Records counts the valid records; End is the offset just past the
	// last of them, Size the file's length (preallocated space included).
	Records int
	End     int64
	Size    int64
	// Reset is set for a segment written by Log.Reset, which makes every
	// segment before it obsolete.
	Reset bool
	// Obsolete is set for a segment before a Reset segment: Open deletes
	// it, and Check counts none of its records.
	Obsolete bool
}

// TailDamage is damage at the end of the last segment that Open cuts away
// rather than refusing the log.
type TailDamage struct {
	Segment string
	Offset  int64
	Reason  string
}

// CheckReport is what Check found in a log directory.
type CheckReport struct {
	// Segments are the segment files, oldest first.
	Segments []SegmentReport
	// Records counts the records Open would keep, First..Last: First and
	// Last are what the opened log's FirstIndex and LastIndex would be
	// (Last is First-1 when it holds no record), both 0 with no segment.
	Records     int
	First, Last uint64
	// Bytes is the length of every segment file, preallocation included.
	Bytes int64
	// TornTail, when set, is a torn final write: normal after a crash, and
	// what Open truncates. Records not yet acknowledged were in it.
	TornTail *TailDamage
	// DroppedGroup counts the records of an AppendGroup group the log ends
	// inside, which Open drops (a group is all or nothing); they are not
	// in Records.
	DroppedGroup int
	// TempFiles are segments whose creation did not finish (*.wal.tmp),
	// which Open deletes; they never held records.
	TempFiles []string
	// Corrupt lists the damage Open would refuse, each a
	// *CorruptionError or a wrapped ErrUnsupportedFormat; Check returns
	// them joined as its error.
	Corrupt []error
}

// Check reads every segment in dir and reports what Open would find,
// without opening the log: it takes no lock and writes nothing, so that an
// operator may check a copy, or the directory of a stopped server, before
// trusting it. Damage Open would refuse (a bad frame before the last
// segment's tail, a valid record after a damaged one, a header that does
// not check out, a gap in the indices) is listed in the report and
// returned as the error, matching ErrCorrupt; a torn tail and an unfinished
// group are reported only, as Open repairs them. Any other error (the
// directory cannot be read) is returned with the report as far as it got.
func Check(dir string) (CheckReport, error) {
	var rep CheckReport
	entries, err := os.ReadDir(dir)
	if err != nil {
		return rep, fmt.Errorf("wal: check: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(name, segmentExt+".tmp"):
			rep.TempFiles = append(rep.TempFiles, name)
		case strings.HasSuffix(name, segmentExt):
			if _, ok := parseSegmentName(name); !ok {
				rep.Corrupt = append(rep.Corrupt, &CorruptionError{Segment: name, Reason: "file name is not a segment name"})
				continue
			}
			names = append(names, name)
		}
	}
	slices.Sort(names) // zero-padded, so lexical order is index order

	var buf []byte
	live := 0                   // rep.Segments[live:] are not obsolete
	unread := map[string]bool{} // segments whose header did not check out
	for i, name := range names {
		first, _ := parseSegmentName(name)
		if buf, err = readFile(filepath.Join(dir, name), buf); err != nil {
			return rep, fmt.Errorf("wal: check segment %s: %w", name, err)
		}
		seg := SegmentReport{Name: name, First: first, Size: int64(len(buf))}
		rep.Bytes += seg.Size
		// Frames are bounded by the file, as Open bounds them.
		r, err := scanSegment(buf, len(buf))
		if err != nil {
			if errors.Is(err, ErrUnsupportedFormat) {
				rep.Corrupt = append(rep.Corrupt, fmt.Errorf("wal: segment %s: %w", name, err))
			} else {
				rep.Corrupt = append(rep.Corrupt, &CorruptionError{Segment: name, Reason: err.Error()})
			}
			rep.Segments = append(rep.Segments, seg)
			unread[name] = true
			continue
		}
		if r.header.first != first {
			rep.Corrupt = append(rep.Corrupt, &CorruptionError{Segment: name, Reason: fmt.Sprintf("header says first index %d", r.header.first)})
		}
		seg.Reset = r.header.flags&flagReset != 0
		if seg.Reset {
			for k := range rep.Segments {
				rep.Segments[k].Obsolete = true
			}
			live = len(rep.Segments)
		}
		seg.Records, seg.End = len(r.offsets), r.end
		last := i == len(names)-1
		if r.badErr != nil {
			switch {
			case !last:
				rep.Corrupt = append(rep.Corrupt, &CorruptionError{Segment: name, Offset: r.end, Reason: r.badErr.Error()})
			case tornTail(buf, int(r.end), len(buf)):
				rep.TornTail = &TailDamage{Segment: name, Offset: r.end, Reason: r.badErr.Error()}
			default:
				rep.Corrupt = append(rep.Corrupt, &CorruptionError{Segment: name, Offset: r.end, Reason: r.badErr.Error() + " (and the damage is not a torn final write)"})
			}
		}
		if last && r.openGroup >= 0 {
			rep.DroppedGroup = len(r.offsets) - r.openGroup
			seg.Records, seg.End = r.openGroup, int64(r.offsets[r.openGroup])
		}
		rep.Segments = append(rep.Segments, seg)
	}
	segs := rep.Segments[live:]
	for i := 1; i < len(segs); i++ {
		prev, s := segs[i-1], segs[i]
		if unread[prev.Name] || unread[s.Name] {
			continue // reported already
		}
		if want := prev.First + uint64(prev.Records); s.First != want {
			rep.Corrupt = append(rep.Corrupt, &CorruptionError{Segment: s.Name, Reason: fmt.Sprintf("starts at index %d but %s ends before index %d", s.First, prev.Name, want)})
		}
	}
	if len(segs) > 0 {
		rep.First = segs[0].First
		for _, s := range segs {
			rep.Records += s.Records
		}
		rep.Last = rep.First + uint64(rep.Records) - 1
	}
	return rep, errors.Join(rep.Corrupt...)
}

// readFile reads the file at path into buf, growing it as needed, through
// a descriptor opened read-only.
func readFile(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	return readWhole(f, buf)
}
