package residenttier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

const (
	// fileSuffix ends the name of every block file.
	fileSuffix = ".cache_block"
	// tempSuffix ends the name of a block file being written.
	tempSuffix = ".tmp"
	// lockName is the file Open locks to keep the directory to one store.
	lockName = "LOCK"
	// fanout is the number of subdirectories, one per first hash byte.
	fanout = 256
)

// fileName is the name of the block file whose ordered key hashes to h.
func fileName(h uint64) string { return string(appendHex(nil, h, 16)) + fileSuffix }

// subdirName is the subdirectory holding the file of hash h.
func subdirName(h uint64) string { return string(appendHex(nil, h>>56, 2)) }

// appendHex appends the low digits*4 bits of v as lower-case hex.
func appendHex(dst []byte, v uint64, digits int) []byte {
	const hexDigits = "0123456789abcdef"
	for i := digits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(v>>(4*i))&0xf])
	}
	return dst
}

// parseFileName returns the hash a block file's name gives, and false for
// any other name.
func parseFileName(name string) (uint64, bool) {
	hex, ok := strings.CutSuffix(name, fileSuffix)
	if !ok || len(hex) != 16 || strings.ToLower(hex) != hex {
		return 0, false
	}
	h, err := strconv.ParseUint(hex, 16, 64)
	return h, err == nil
}

func (s *Store) subdir(h uint64) string { return filepath.Join(s.dir, subdirName(h)) }

// filePath is the path of the file of hash h, built in one allocation: it
// is on every read.
func (s *Store) filePath(h uint64) string {
	var sb strings.Builder
	sb.Grow(len(s.dir) + 1 + 2 + 1 + 16 + len(fileSuffix))
	var buf [16]byte
	sb.WriteString(s.dir)
	sb.WriteByte(filepath.Separator)
	sb.Write(appendHex(buf[:0], h>>56, 2))
	sb.WriteByte(filepath.Separator)
	sb.Write(appendHex(buf[:0], h, 16))
	sb.WriteString(fileSuffix)
	return sb.String()
}

// writeFile puts enc in place as the file of hash h: written to a
// temporary file in the same directory and renamed over the old one, so
// a reader sees the old block or the new one, whole. With Sync the file
// is fsynced before the rename and the directory after it.
func (s *Store) writeFile(h uint64, enc []byte) (err error) {
	dir := s.subdir(h)
	f, err := os.CreateTemp(dir, fileName(h)+".*"+tempSuffix)
	if err != nil {
		return fmt.Errorf("residenttier: write block: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
			err = fmt.Errorf("residenttier: write block: %w", err)
		}
	}()
	if _, err := f.Write(enc); err != nil {
		f.Close()
		return err
	}
	if s.opts.Sync {
		s.st.fsyncs.Add(1)
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, fileName(h))); err != nil {
		return err
	}
	if s.opts.Sync {
		return s.syncDir(dir)
	}
	return nil
}

// removeFile unlinks the file of hash h; a missing file is not an error.
func (s *Store) removeFile(h uint64) error {
	err := os.Remove(s.filePath(h))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("residenttier: remove block: %w", err)
	}
	return nil
}

func (s *Store) syncDir(dir string) error {
	s.st.fsyncs.Add(1)
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// readFile returns the bytes of the file of hash h and a function to call
// once they are no longer used: with Mmap they are the mapped file, which
// that function unmaps. A file renamed over or removed meanwhile stays
// mapped as it was (its inode lives until unmapped), and no file is ever
// truncated or written in place, so the mapping never changes under the
// reader. A missing file is an error matching [os.ErrNotExist].
func (s *Store) readFile(h uint64) ([]byte, func(), error) {
	path := s.filePath(h)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	size := st.Size
	if size < blockfmt.HeaderLen || size > maxFileLen {
		// Too short or too long to be a block: let the decoder say so.
		return make([]byte, min(size, blockfmt.HeaderLen-1)), noRelease, nil
	}
	if s.opts.Mmap {
		b, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
		}
		return b, func() { unix.Munmap(b) }, nil
	}
	b := make([]byte, size)
	n := 0
	for n < len(b) {
		m, err := unix.Pread(fd, b[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break // shorter than it was: the decoder will refuse it
		}
		n += m
	}
	return b[:n], noRelease, nil
}

func noRelease() {}

// maxFileLen bounds a block file: the header, three key fields and a
// value at their format limits.
const maxFileLen int64 = blockfmt.HeaderLen + 3*blockfmt.MaxKeyFieldLen + blockfmt.MaxValueLen

// decodeView decodes data into a block whose value aliases data when it is
// stored uncompressed. The header is verified (CRC over every byte) first.
func decodeView(data []byte) (blockfmt.Block, error) {
	h, err := blockfmt.DecodeHeader(data)
	if err != nil {
		return blockfmt.Block{}, err
	}
	if h.Compressed {
		return blockfmt.Decode(data)
	}
	return blockfmt.Block{
		Key:       h.Key,
		Kind:      h.Kind,
		Hotness:   h.Hotness,
		ExpiresAt: h.ExpiresAt,
		Value:     data[len(data)-h.StoredLen : len(data) : len(data)],
	}, nil
}

// lockDir takes an exclusive flock on dir's lock file.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("residenttier: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("residenttier: lock %s: %w", dir, err)
	}
	return f, nil
}
