package matrixobject

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
)

// An append blob is one file in buckets/<b>/append/<hex sha256(key)>:
//
//	header: magic "MXAPNDv1" (8) | key length u32 | CRC32C of the key u32 | key
//	frames: length u32 | CRC32C of the data u32 | data
//
// one frame per append, all little endian. An append writes its frame with
// one pwrite at the end of the file and fdatasyncs before returning;
// appends to one blob are serialized, so only the last frame can be torn by
// a crash. Open walks the frame headers and checks the last frame's CRC; a
// torn last frame was never acknowledged and is cut off. The blob's bytes
// are the frames' data in order; an in-memory list of extents maps blob
// offsets to file offsets.
//
// Readers see the blob through an immutable snapshot (size and extents)
// that is published only after the fdatasync, so a reader never sees bytes
// that are not yet durable, and always sees a prefix of the blob.
const (
	appendMagic       = "MXAPNDv1"
	frameHeader       = 8
	appendHeaderFixed = 16
)

type extent struct {
	off  int64 // blob offset of the frame's first byte
	pos  int64 // file offset of the frame's data
	size int64
}

type appendState struct {
	size    int64
	extents []extent
}

type appendBlob struct {
	key string
	mu  sync.Mutex // serializes appends and delete
	f   *os.File
	end int64 // file size
	// failed is set after a failed write or sync: the page cache may no
	// longer match the disk, so every later append fails with it.
	failed error
	state  atomic.Pointer[appendState]
}

// AppendResult describes a completed append.
type AppendResult struct {
	// Offset is where the appended bytes begin in the blob.
	Offset int64
	// Size is the blob's size after the append.
	Size int64
}

func encodeAppendHeader(key string) []byte {
	b := make([]byte, appendHeaderFixed+len(key))
	copy(b, appendMagic)
	binary.LittleEndian.PutUint32(b[8:12], uint32(len(key)))
	binary.LittleEndian.PutUint32(b[12:16], crc32.Checksum([]byte(key), castagnoli))
	copy(b[appendHeaderFixed:], key)
	return b
}

// loadAppendBlob opens an append-blob file, walks its frames and cuts a
// torn last frame.
func (s *Store) loadAppendBlob(path string) (*appendBlob, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	ab, err := scanAppendBlob(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st, _ := f.Stat(); st != nil && st.Size() != ab.end {
		s.opts.Logger.Info("cut torn append", "key", ab.key, "from", st.Size(), "to", ab.end)
		if err := f.Truncate(ab.end); err != nil {
			f.Close()
			return nil, err
		}
		if err := fdatasync(f); err != nil {
			f.Close()
			return nil, err
		}
	}
	return ab, nil
}

// scanAppendBlob reads the header and frame headers of f. It returns the
// blob with end set to the length of the valid frames.
func scanAppendBlob(f *os.File) (*appendBlob, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	var hdr [appendHeaderFixed]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("%w: append blob header: %v", ErrCorrupt, err)
	}
	if string(hdr[:8]) != appendMagic {
		return nil, fmt.Errorf("%w: not an append blob", ErrCorrupt)
	}
	klen := int64(binary.LittleEndian.Uint32(hdr[8:12]))
	if klen == 0 || klen > MaxKeyLen || appendHeaderFixed+klen > size {
		return nil, fmt.Errorf("%w: append blob key length %d", ErrCorrupt, klen)
	}
	key := make([]byte, klen)
	if _, err := f.ReadAt(key, appendHeaderFixed); err != nil {
		return nil, err
	}
	if crc32.Checksum(key, castagnoli) != binary.LittleEndian.Uint32(hdr[12:16]) {
		return nil, fmt.Errorf("%w: append blob key checksum", ErrCorrupt)
	}
	st2 := &appendState{}
	pos := appendHeaderFixed + klen
	var fh [frameHeader]byte
	for pos < size {
		if size-pos < frameHeader {
			break // torn frame header
		}
		if _, err := f.ReadAt(fh[:], pos); err != nil {
			return nil, err
		}
		n := int64(binary.LittleEndian.Uint32(fh[0:4]))
		if n == 0 || pos+frameHeader+n > size {
			break // torn or never-written frame
		}
		if pos+frameHeader+n == size {
			// The last frame: check its data, which a crash may have torn.
			data := make([]byte, n)
			if _, err := f.ReadAt(data, pos+frameHeader); err != nil {
				return nil, err
			}
			if crc32.Checksum(data, castagnoli) != binary.LittleEndian.Uint32(fh[4:8]) {
				break
			}
		}
		st2.extents = append(st2.extents, extent{off: st2.size, pos: pos + frameHeader, size: n})
		st2.size += n
		pos += frameHeader + n
	}
	ab := &appendBlob{key: string(key), f: f, end: pos}
	ab.state.Store(st2)
	return ab, nil
}

// appendTarget returns the append blob bucket/key, creating it when create
// is set.
func (s *Store) appendTarget(b *bucket, key string, create bool) (*appendBlob, error) {
	b.mu.RLock()
	ab, ok := b.blobs[key]
	deleted := b.deleted
	b.mu.RUnlock()
	if deleted {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchBucket, b.name)
	}
	if ok {
		return ab, nil
	}
	if !create {
		return nil, fmt.Errorf("%w: append blob %s/%s", ErrNoSuchKey, b.name, key)
	}
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	if b.deleted {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchBucket, b.name)
	}
	if ab, ok := b.blobs[key]; ok {
		return ab, nil
	}
	if q := b.quota; q.MaxObjects > 0 && b.usage.Objects+1 > q.MaxObjects {
		return nil, fmt.Errorf("%w: %s holds %d objects (quota %d)", ErrQuotaExceeded, b.name, b.usage.Objects, q.MaxObjects)
	}
	hdr := encodeAppendHeader(key)
	tmp := filepath.Join(s.dir, tmpDir, "append-"+randomHex(8))
	if err := writeFileSync(tmp, hdr); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	dir := filepath.Join(b.dir, appendDir)
	path := filepath.Join(dir, fileName(key))
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	ab = &appendBlob{key: key, f: f, end: int64(len(hdr))}
	ab.state.Store(&appendState{})
	b.mu.Lock()
	b.blobs[key] = ab
	b.usage.Objects++
	b.mu.Unlock()
	return ab, nil
}

// Append appends p to the append blob bucket/key, creating the blob if it
// does not exist. The bytes are durable (fdatasync) when it returns.
// Concurrent appends to one blob are serialized; each is atomic: after a
// crash the blob holds all of an append or none of it.
func (s *Store) Append(ctx context.Context, bucket, key string, p []byte) (AppendResult, error) {
	return s.appendBlob(ctx, bucket, key, p, -1)
}

// AppendAt is Append on the condition that the blob is offset bytes long
// (0 for a blob that does not exist yet); otherwise it fails with
// ErrOffsetMismatch and appends nothing. Writers that share a blob use it to
// detect that another writer got there first.
func (s *Store) AppendAt(ctx context.Context, bucket, key string, offset int64, p []byte) (AppendResult, error) {
	if offset < 0 {
		return AppendResult{}, fmt.Errorf("%w: negative offset %d", ErrInvalidArgument, offset)
	}
	return s.appendBlob(ctx, bucket, key, p, offset)
}

func (s *Store) appendBlob(ctx context.Context, bucket, key string, p []byte, want int64) (AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return AppendResult{}, err
	}
	if err := ValidateKey(key); err != nil {
		return AppendResult{}, err
	}
	if len(p) > s.opts.MaxAppendSize {
		return AppendResult{}, fmt.Errorf("%w: append of %d bytes, more than %d", ErrTooLarge, len(p), s.opts.MaxAppendSize)
	}
	b, err := s.bucket(bucket)
	if err != nil {
		return AppendResult{}, err
	}
	ab, err := s.appendTarget(b, key, true)
	if err != nil {
		return AppendResult{}, err
	}
	ab.mu.Lock()
	defer ab.mu.Unlock()
	if ab.failed != nil {
		return AppendResult{}, ab.failed
	}
	cur := ab.state.Load()
	if want >= 0 && want != cur.size {
		return AppendResult{}, fmt.Errorf("%w: blob %s/%s is %d bytes, expected %d", ErrOffsetMismatch, bucket, key, cur.size, want)
	}
	if len(p) == 0 {
		return AppendResult{Offset: cur.size, Size: cur.size}, nil
	}
	if err := b.reserve(int64(len(p))); err != nil {
		return AppendResult{}, err
	}
	frame := make([]byte, frameHeader+len(p))
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(p)))
	binary.LittleEndian.PutUint32(frame[4:8], crc32.Checksum(p, castagnoli))
	copy(frame[frameHeader:], p)
	if _, err := ab.f.WriteAt(frame, ab.end); err != nil {
		ab.failed = fmt.Errorf("matrixobject: append blob %s/%s failed: %w", bucket, key, err)
		b.reserve(-int64(len(p)))
		return AppendResult{}, ab.failed
	}
	if err := fdatasync(ab.f); err != nil {
		ab.failed = fmt.Errorf("matrixobject: append blob %s/%s failed: %w", bucket, key, err)
		b.reserve(-int64(len(p)))
		return AppendResult{}, ab.failed
	}
	next := &appendState{size: cur.size + int64(len(p)), extents: append(cur.extents, extent{off: cur.size, pos: ab.end + frameHeader, size: int64(len(p))})}
	ab.end += int64(len(frame))
	ab.state.Store(next)
	return AppendResult{Offset: cur.size, Size: next.size}, nil
}

// reserve adds n bytes to the bucket's usage, failing with ErrQuotaExceeded
// if that would pass its byte quota. A negative n releases bytes.
func (b *bucket) reserve(n int64) error {
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	if n > 0 && b.quota.MaxBytes > 0 && b.usage.Bytes+n > b.quota.MaxBytes {
		return fmt.Errorf("%w: %s holds %d bytes, appending %d (quota %d)", ErrQuotaExceeded, b.name, b.usage.Bytes, n, b.quota.MaxBytes)
	}
	b.mu.Lock()
	b.usage.Bytes += n
	b.mu.Unlock()
	return nil
}

// ReadAppendBlob reads up to len(p) bytes of the append blob at off, as
// io.ReaderAt does: it returns io.EOF when it reads fewer than len(p)
// because the blob ends. Only durable bytes are visible.
func (s *Store) ReadAppendBlob(ctx context.Context, bucket, key string, off int64, p []byte) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("%w: negative offset %d", ErrInvalidArgument, off)
	}
	ab, err := s.lookupAppend(bucket, key)
	if err != nil {
		return 0, err
	}
	st := ab.state.Load()
	if len(p) == 0 {
		return 0, nil
	}
	if off >= st.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), st.size-off)
	i := sort.Search(len(st.extents), func(i int) bool { return st.extents[i].off+st.extents[i].size > off })
	n := int64(0)
	for n < want {
		e := st.extents[i]
		in := off + n - e.off
		k := min(e.size-in, want-n)
		if _, err := ab.f.ReadAt(p[n:n+k], e.pos+in); err != nil {
			return int(n), err
		}
		n += k
		i++
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// AppendBlobSize returns the durable size of an append blob.
func (s *Store) AppendBlobSize(ctx context.Context, bucket, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ab, err := s.lookupAppend(bucket, key)
	if err != nil {
		return 0, err
	}
	return ab.state.Load().size, nil
}

func (s *Store) lookupAppend(bucket, key string) (*appendBlob, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	b, err := s.bucket(bucket)
	if err != nil {
		return nil, err
	}
	return s.appendTarget(b, key, false)
}

// DeleteAppendBlob removes an append blob; the removal is durable when it
// returns.
func (s *Store) DeleteAppendBlob(ctx context.Context, bucket, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ab, err := s.lookupAppend(bucket, key)
	if err != nil {
		return err
	}
	b, _ := s.bucket(bucket)
	ab.mu.Lock()
	defer ab.mu.Unlock()
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	if b.blobs[key] != ab {
		return fmt.Errorf("%w: append blob %s/%s", ErrNoSuchKey, bucket, key)
	}
	dir := filepath.Join(b.dir, appendDir)
	if err := os.Remove(filepath.Join(dir, fileName(key))); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	ab.failed = fmt.Errorf("%w: append blob %s/%s was deleted", ErrNoSuchKey, bucket, key)
	ab.f.Close()
	b.mu.Lock()
	delete(b.blobs, key)
	b.usage.Bytes -= ab.state.Load().size
	b.usage.Objects--
	b.mu.Unlock()
	return nil
}
