package cachebench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Format is the text format of a trace file.
type Format string

const (
	// FormatARC is the format of the ARC paper's traces (Megiddo & Modha):
	// each line is "start count x x" and stands for the keys start,
	// start+1, ..., start+count-1, in that order. Fields after the second
	// are ignored.
	FormatARC Format = "arc"
	// FormatLIRS is the format of the LIRS paper's traces: one integer key
	// a line.
	FormatLIRS Format = "lirs"
)

// ParseFormat reads "arc" or "lirs" (any case).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatARC, FormatLIRS:
		return f, nil
	}
	return "", fmt.Errorf("unknown trace format %q (want arc or lirs)", s)
}

// maxTraceRequests bounds the requests a trace may expand to (an ARC line's
// count can be anything), so that a corrupt file fails instead of
// exhausting memory: 2^28 keys are 2 GiB.
const maxTraceRequests = 1 << 28

// errTraceTooLong is returned when a trace expands past maxTraceRequests.
var errTraceTooLong = fmt.Errorf("trace expands to more than %d requests", maxTraceRequests)

// Trace is a request sequence loaded into memory.
type Trace struct {
	// Name labels the trace in the report ("oltp", "zipf", or the base name
	// of a user's file without its extensions).
	Name string
	// Path is the file it was read from ("" for a generated trace).
	Path string
	// Format is the file's format ("" for a generated trace).
	Format Format
	// Keys are the requests, in order.
	Keys []uint64
}

// Distinct counts the distinct keys of t.
func (t *Trace) Distinct() int {
	seen := make(map[uint64]struct{}, len(t.Keys)/4)
	for _, k := range t.Keys {
		seen[k] = struct{}{}
	}
	return len(seen)
}

// ReadTraceFile reads a trace file, gzip-compressed or plain (told apart
// by the gzip magic bytes, not the name). An empty format is sniffed from
// the first non-blank line: one field means LIRS, more mean ARC.
func ReadTraceFile(path string, format Format) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := decompress(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if format == "" {
		if format, err = sniffFormat(br); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	keys, err := ReadTrace(br, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Trace{Name: traceName(path), Path: path, Format: format, Keys: keys}, nil
}

// traceName is the base name of path without its extensions:
// "/x/oltp.gz" and "oltp.trace.gz" give "oltp".
func traceName(path string) string {
	base := filepath.Base(path)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// decompress returns a reader of the plain text behind br: br itself, or a
// gzip reader when br starts with the gzip magic bytes.
func decompress(br *bufio.Reader) (io.Reader, error) {
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// sniffFormat looks at the first non-blank line of br (without consuming
// it) and guesses its format.
func sniffFormat(br *bufio.Reader) (Format, error) {
	for size := 4096; ; size *= 4 {
		buf, err := br.Peek(size)
		for _, line := range bytes.Split(buf, []byte{'\n'}) {
			switch len(bytes.Fields(line)) {
			case 0:
				continue
			case 1:
				return FormatLIRS, nil
			default:
				return FormatARC, nil
			}
		}
		if err != nil || size >= br.Size() {
			return "", errors.New("cannot tell the trace format: no non-blank line near the start; set FORMAT=arc|lirs")
		}
	}
}

// ReadTrace parses a plain-text trace in format from r. Blank lines are
// skipped; line endings may be \n or \r\n.
func ReadTrace(r io.Reader, format Format) ([]uint64, error) {
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	var keys []uint64
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch format {
		case FormatLIRS:
			if len(fields) != 1 {
				return nil, fmt.Errorf("line %d: want one key, got %d fields (is it an ARC trace?)", line, len(fields))
			}
			k, err := parseKey(fields[0])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			keys = append(keys, k)
		case FormatARC:
			if len(fields) < 2 {
				return nil, fmt.Errorf("line %d: want \"start count ...\", got %q (is it a LIRS trace?)", line, sc.Text())
			}
			start, err := parseKey(fields[0])
			if err != nil {
				return nil, fmt.Errorf("line %d: start: %w", line, err)
			}
			count, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: count: %w", line, err)
			}
			if count > maxTraceRequests-uint64(len(keys)) {
				return nil, fmt.Errorf("line %d: %w", line, errTraceTooLong)
			}
			for i := range count {
				keys = append(keys, start+i)
			}
		}
		if len(keys) > maxTraceRequests {
			return nil, errTraceTooLong
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("trace has no requests")
	}
	return keys, nil
}

// parseKey reads a decimal key; negative keys (some traces have them) keep
// their two's-complement bits.
func parseKey(s string) (uint64, error) {
	if k, err := strconv.ParseUint(s, 10, 64); err == nil {
		return k, nil
	}
	k, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad key %q", s)
	}
	return uint64(k), nil
}
