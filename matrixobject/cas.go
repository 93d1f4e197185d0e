package matrixobject

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Content-addressed blobs live in cas/<first two hex digits>/<hex sha256>,
// holding exactly the content. Reference counts are kept in memory and in
// cas/refs.log, a journal of fixed 44-byte records
//
//	CRC32C of [4:44] u32 | SHA-256 (32 bytes) | count u64
//
// each giving a blob's new count; the last record for a blob wins. Every
// change is appended and fdatasynced before the call returns. Open replays
// the journal (cutting a torn last record) and rewrites it compactly when it
// has grown to several times the live records.

const refRecordSize = 44

type casState struct {
	s    *Store
	mu   sync.Mutex // guards refs, the journal and every blob file change
	refs map[[32]byte]int64
	log  *os.File
	logN int64 // records in the journal
}

// BlobRef names a content-addressed blob.
type BlobRef struct {
	// SHA256 is the hex SHA-256 of the content: the blob's address.
	SHA256 string
	Size   int64
}

func (s *Store) casPath(sum string) string {
	return filepath.Join(s.dir, casDir, sum[:2], sum)
}

func parseSum(sum string) ([32]byte, error) {
	var k [32]byte
	b, err := hex.DecodeString(sum)
	if err != nil || len(b) != 32 || strings.ToLower(sum) != sum {
		return k, fmt.Errorf("%w: %q is not a lower-case hex SHA-256", ErrInvalidArgument, sum)
	}
	copy(k[:], b)
	return k, nil
}

func openCAS(s *Store) (*casState, error) {
	c := &casState{s: s, refs: map[[32]byte]int64{}}
	path := filepath.Join(s.dir, casDir, refsLogName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	c.log = f
	r := bufio.NewReaderSize(f, 1<<16)
	var rec [refRecordSize]byte
	var good int64
	for {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			f.Close()
			return nil, err
		}
		if crc32.Checksum(rec[4:], castagnoli) != binary.LittleEndian.Uint32(rec[0:4]) {
			break // a torn last record; nothing after it was acknowledged
		}
		var k [32]byte
		copy(k[:], rec[4:36])
		n := int64(binary.LittleEndian.Uint64(rec[36:44]))
		if n <= 0 {
			delete(c.refs, k)
		} else {
			c.refs[k] = n
		}
		good++
	}
	c.logN = good
	if st, err := f.Stat(); err == nil && st.Size() != good*refRecordSize {
		s.opts.Logger.Info("cut torn reference record", "from", st.Size(), "to", good*refRecordSize)
	}
	if good > 1024 && good > 4*int64(len(c.refs)) {
		if err := c.compact(); err != nil {
			f.Close()
			return nil, err
		}
		return c, nil
	}
	if err := f.Truncate(good * refRecordSize); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(good*refRecordSize, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// compact rewrites the journal with one record per live blob.
func (c *casState) compact() error {
	keys := slices.SortedFunc(func(yield func([32]byte) bool) {
		for k := range c.refs {
			if !yield(k) {
				return
			}
		}
	}, func(a, b [32]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
	buf := make([]byte, 0, len(keys)*refRecordSize)
	for _, k := range keys {
		buf = append(buf, encodeRef(k, c.refs[k])...)
	}
	path := filepath.Join(c.s.dir, casDir, refsLogName)
	if err := c.s.replaceFile(path, buf); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return err
	}
	c.log.Close()
	c.log = f
	c.logN = int64(len(keys))
	return nil
}

func encodeRef(k [32]byte, n int64) []byte {
	var rec [refRecordSize]byte
	copy(rec[4:36], k[:])
	binary.LittleEndian.PutUint64(rec[36:44], uint64(n))
	binary.LittleEndian.PutUint32(rec[0:4], crc32.Checksum(rec[4:], castagnoli))
	return rec[:]
}

// setRef journals a new count and applies it. c.mu is held.
func (c *casState) setRef(k [32]byte, n int64) error {
	if _, err := c.log.Write(encodeRef(k, n)); err != nil {
		return err
	}
	if err := fdatasync(c.log); err != nil {
		return err
	}
	c.logN++
	if n <= 0 {
		delete(c.refs, k)
	} else {
		c.refs[k] = n
	}
	return nil
}

func (c *casState) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log.Close()
}

// PutBlob stores the bytes read from r under their SHA-256 and adds one
// reference to the blob. Storing content that is already there only adds
// the reference. The blob and its count are durable when it returns.
func (s *Store) PutBlob(ctx context.Context, r io.Reader) (BlobRef, error) {
	if err := ctx.Err(); err != nil {
		return BlobRef{}, err
	}
	if err := s.checkOpen(); err != nil {
		return BlobRef{}, err
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, tmpDir), "blob-*")
	if err != nil {
		return BlobRef{}, err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	sh := sha256.New()
	n, err := s.copyHashed(ctx, f, r, s.opts.MaxObjectSize, sh)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return BlobRef{}, err
	}
	var k [32]byte
	copy(k[:], sh.Sum(nil))
	ref := BlobRef{SHA256: hex.EncodeToString(k[:]), Size: n}
	c := s.cas
	c.mu.Lock()
	defer c.mu.Unlock()
	path := s.casPath(ref.SHA256)
	if _, err := os.Stat(path); isNotExist(err) {
		dir := filepath.Dir(path)
		if _, err := os.Stat(dir); isNotExist(err) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return BlobRef{}, err
			}
			if err := syncDir(filepath.Dir(dir)); err != nil {
				return BlobRef{}, err
			}
		}
		if err := os.Rename(tmp, path); err != nil {
			return BlobRef{}, err
		}
		if err := syncDir(dir); err != nil {
			return BlobRef{}, err
		}
	} else if err != nil {
		return BlobRef{}, err
	}
	if err := c.setRef(k, c.refs[k]+1); err != nil {
		return BlobRef{}, err
	}
	return ref, nil
}

// BlobReader reads a content-addressed blob. Close it when done.
type BlobReader struct {
	Ref BlobRef
	*io.SectionReader
	f *os.File
}

// Close releases the file.
func (r *BlobReader) Close() error { return r.f.Close() }

// OpenBlob opens the blob with the given hex SHA-256.
func (s *Store) OpenBlob(ctx context.Context, sum string) (*BlobReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := parseSum(sum); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.casPath(sum))
	if isNotExist(err) {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchBlob, sum)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &BlobReader{Ref: BlobRef{SHA256: sum, Size: st.Size()}, SectionReader: io.NewSectionReader(f, 0, st.Size()), f: f}, nil
}

// BlobRefs returns a blob's reference count (0 for an unknown blob).
func (s *Store) BlobRefs(ctx context.Context, sum string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	k, err := parseSum(sum)
	if err != nil {
		return 0, err
	}
	s.cas.mu.Lock()
	defer s.cas.mu.Unlock()
	return s.cas.refs[k], nil
}

// IncRef adds a reference to a stored blob and returns the new count. The
// count is durable when it returns.
func (s *Store) IncRef(ctx context.Context, sum string) (int64, error) {
	return s.addRef(ctx, sum, 1)
}

// DecRef drops a reference to a blob and returns the new count; this is
// how a blob is deleted. A blob left with no reference is removed by the
// next SweepBlobs. Dropping a reference the blob does not have fails with
// ErrInvalidArgument.
func (s *Store) DecRef(ctx context.Context, sum string) (int64, error) {
	return s.addRef(ctx, sum, -1)
}

func (s *Store) addRef(ctx context.Context, sum string, d int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	k, err := parseSum(sum)
	if err != nil {
		return 0, err
	}
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	c := s.cas
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := os.Stat(s.casPath(sum)); isNotExist(err) {
		return 0, fmt.Errorf("%w: %s", ErrNoSuchBlob, sum)
	}
	n := c.refs[k] + d
	if n < 0 {
		return 0, fmt.Errorf("%w: blob %s has no reference to drop", ErrInvalidArgument, sum)
	}
	if err := c.setRef(k, n); err != nil {
		return 0, err
	}
	return n, nil
}

// SweepReport says what a sweep removed, or with DryRun would remove.
type SweepReport struct {
	DryRun bool
	// Blobs are the unreferenced blobs, by hash.
	Blobs []BlobRef
	// Bytes is their total size.
	Bytes int64
}

// SweepBlobs finds every stored blob with no reference. With dryRun it only
// reports them; otherwise it removes them (durably) and reports what it
// removed. A blob that gains a reference while the sweep runs is kept.
func (s *Store) SweepBlobs(ctx context.Context, dryRun bool) (SweepReport, error) {
	rep := SweepReport{DryRun: dryRun}
	if err := s.checkOpen(); err != nil {
		return rep, err
	}
	root := filepath.Join(s.dir, casDir)
	shards, err := os.ReadDir(root)
	if err != nil {
		return rep, err
	}
	c := s.cas
	for _, sh := range shards {
		if !sh.IsDir() {
			continue
		}
		dir := filepath.Join(root, sh.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			return rep, err
		}
		removed := false
		for _, e := range ents {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			k, err := parseSum(e.Name())
			if err != nil {
				continue
			}
			c.mu.Lock()
			if c.refs[k] > 0 {
				c.mu.Unlock()
				continue
			}
			info, err := e.Info()
			if err != nil {
				c.mu.Unlock()
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				return rep, err
			}
			if !dryRun {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					c.mu.Unlock()
					return rep, err
				}
				removed = true
			}
			c.mu.Unlock()
			rep.Blobs = append(rep.Blobs, BlobRef{SHA256: e.Name(), Size: info.Size()})
			rep.Bytes += info.Size()
		}
		if removed {
			c.mu.Lock()
			err := syncDir(dir)
			c.mu.Unlock()
			if err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}
