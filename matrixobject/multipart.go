package matrixobject

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A multipart upload lives in uploads/<id>/: upload.json (bucket, key,
// content type, metadata, start time) and one file per uploaded part,
// part.NNNNN, in the object file format (data, trailer with the part's MD5).
// Completing concatenates the parts into a new object file under tmp/,
// fsyncs it and commits it like PutObject; the upload directory is removed
// afterwards. A crash before the commit leaves the old object; a crash after
// it leaves the new one and an upload directory that SweepUploads removes.

type uploadFile struct {
	Bucket      string            `json:"bucket"`
	Key         string            `json:"key"`
	ContentType string            `json:"content_type,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Started     time.Time         `json:"started"`
}

// PartInfo describes an uploaded part.
type PartInfo struct {
	PartNumber int
	Size       int64
	// ETag is the hex MD5 of the part, without quotes.
	ETag    string
	ModTime time.Time
}

// CompletedPart names a part to include in the completed object, with the
// ETag UploadPart returned for it (quotes are ignored).
type CompletedPart struct {
	PartNumber int
	ETag       string
}

// UploadInfo describes a multipart upload in progress.
type UploadInfo struct {
	UploadID string
	Bucket   string
	Key      string
	Started  time.Time
}

func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

func (s *Store) uploadLock(id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &s.uploadLocks[h.Sum32()%uint32(len(s.uploadLocks))]
}

func (s *Store) uploadDir(id string) string { return filepath.Join(s.dir, uploadsDir, id) }

// readUpload reads an upload's description and checks it belongs to
// bucket/key.
func (s *Store) readUpload(bucket, key, id string) (*uploadFile, error) {
	if !validUploadID(id) {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchUpload, id)
	}
	raw, err := os.ReadFile(filepath.Join(s.uploadDir(id), uploadMeta))
	if isNotExist(err) {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchUpload, id)
	}
	if err != nil {
		return nil, err
	}
	var u uploadFile
	if err := json.Unmarshal(raw, &u); err != nil {
		return nil, fmt.Errorf("%w: upload %s: %v", ErrCorrupt, id, err)
	}
	if u.Bucket != bucket || u.Key != key {
		return nil, fmt.Errorf("%w: %s is not an upload of %s/%s", ErrNoSuchUpload, id, bucket, key)
	}
	return &u, nil
}

// CreateMultipartUpload starts a multipart upload of bucket/key and returns
// its ID. Content type and metadata are taken from o; its digests are
// ignored.
func (s *Store) CreateMultipartUpload(ctx context.Context, bucket, key string, o PutOptions) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if _, err := s.bucket(bucket); err != nil {
		return "", err
	}
	m, err := o.meta(key)
	if err != nil {
		return "", err
	}
	id := randomHex(16)
	u := uploadFile{Bucket: bucket, Key: key, ContentType: m.ContentType, Metadata: m.Metadata, Started: s.opts.Now().UTC()}
	tmp, err := os.MkdirTemp(filepath.Join(s.dir, tmpDir), "upload-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := writeFileSync(filepath.Join(tmp, uploadMeta), mustJSON(u)); err != nil {
		return "", err
	}
	if err := syncDir(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, s.uploadDir(id)); err != nil {
		return "", err
	}
	if err := syncDir(filepath.Join(s.dir, uploadsDir)); err != nil {
		return "", err
	}
	return id, nil
}

func partName(n int) string { return fmt.Sprintf("part.%05d", n) }

// UploadPart stores part number n (1 to Options.MaxParts) of an upload,
// replacing an earlier upload of the same number. The part is durable when
// it returns.
func (s *Store) UploadPart(ctx context.Context, bucket, key, uploadID string, n int, r io.Reader, o PutOptions) (PartInfo, error) {
	if err := ctx.Err(); err != nil {
		return PartInfo{}, err
	}
	if n < 1 || n > s.opts.MaxParts {
		return PartInfo{}, fmt.Errorf("%w: part number %d out of range [1, %d]", ErrInvalidArgument, n, s.opts.MaxParts)
	}
	if err := s.checkOpen(); err != nil {
		return PartInfo{}, err
	}
	if _, err := s.readUpload(bucket, key, uploadID); err != nil {
		return PartInfo{}, err
	}
	m := &objectMeta{Key: key, Parts: n}
	if _, err := o.meta(key); err != nil {
		return PartInfo{}, err
	}
	tmp, err := s.writeTemp(ctx, "part", r, s.opts.MaxPartSize, m, o)
	if err != nil {
		return PartInfo{}, err
	}
	mu := s.uploadLock(uploadID)
	mu.Lock()
	defer mu.Unlock()
	if _, err := s.readUpload(bucket, key, uploadID); err != nil {
		os.Remove(tmp)
		return PartInfo{}, err
	}
	dir := s.uploadDir(uploadID)
	if err := os.Rename(tmp, filepath.Join(dir, partName(n))); err != nil {
		os.Remove(tmp)
		return PartInfo{}, err
	}
	if err := syncDir(dir); err != nil {
		return PartInfo{}, err
	}
	return PartInfo{PartNumber: n, Size: m.Size, ETag: m.ETag, ModTime: m.ModTime}, nil
}

// ListParts returns the uploaded parts of an upload, by part number.
func (s *Store) ListParts(ctx context.Context, bucket, key, uploadID string) ([]PartInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	mu := s.uploadLock(uploadID)
	mu.Lock()
	defer mu.Unlock()
	if _, err := s.readUpload(bucket, key, uploadID); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(s.uploadDir(uploadID))
	if err != nil {
		return nil, err
	}
	var out []PartInfo
	for _, e := range ents {
		num, ok := strings.CutPrefix(e.Name(), "part.")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		m, err := readMetaFile(filepath.Join(s.uploadDir(uploadID), e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, PartInfo{PartNumber: n, Size: m.Size, ETag: m.ETag, ModTime: m.ModTime})
	}
	return out, nil
}

func readMetaFile(path string) (*objectMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readMeta(f)
}

// CompleteMultipartUpload assembles the listed parts, in order, into
// bucket/key and ends the upload. Part numbers must be strictly ascending
// (ErrInvalidPartOrder); every part must have been uploaded with the given
// ETag (ErrInvalidPart); every part but the last must be at least
// Options.MinPartSize (ErrTooSmall). On any error nothing changes and the
// upload stays open. The object's ETag is S3's: the hex MD5 of the
// concatenated binary MD5s of the parts, "-", the number of parts.
func (s *Store) CompleteMultipartUpload(ctx context.Context, bucket, key, uploadID string, parts []CompletedPart) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	b, err := s.bucket(bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	if len(parts) == 0 {
		return ObjectInfo{}, fmt.Errorf("%w: no parts listed", ErrInvalidPart)
	}
	mu := s.uploadLock(uploadID)
	mu.Lock()
	defer mu.Unlock()
	u, err := s.readUpload(bucket, key, uploadID)
	if err != nil {
		return ObjectInfo{}, err
	}
	dir := s.uploadDir(uploadID)
	files := make([]*os.File, 0, len(parts))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	etags := md5.New()
	var total int64
	readers := make([]io.Reader, 0, len(parts))
	sizes := make([]int64, 0, len(parts))
	for i, p := range parts {
		if i > 0 && p.PartNumber <= parts[i-1].PartNumber {
			return ObjectInfo{}, fmt.Errorf("%w: part %d after part %d", ErrInvalidPartOrder, p.PartNumber, parts[i-1].PartNumber)
		}
		if p.PartNumber < 1 || p.PartNumber > s.opts.MaxParts {
			return ObjectInfo{}, fmt.Errorf("%w: part number %d out of range", ErrInvalidPart, p.PartNumber)
		}
		f, err := os.Open(filepath.Join(dir, partName(p.PartNumber)))
		if isNotExist(err) {
			return ObjectInfo{}, fmt.Errorf("%w: part %d was not uploaded", ErrInvalidPart, p.PartNumber)
		}
		if err != nil {
			return ObjectInfo{}, err
		}
		files = append(files, f)
		m, err := readMeta(f)
		if err != nil {
			return ObjectInfo{}, err
		}
		if want := strings.Trim(p.ETag, `"`); !strings.EqualFold(want, m.ETag) {
			return ObjectInfo{}, fmt.Errorf("%w: part %d has ETag %q, not %q", ErrInvalidPart, p.PartNumber, m.ETag, want)
		}
		sizes = append(sizes, m.Size)
		sum, _ := hex.DecodeString(m.ETag)
		etags.Write(sum)
		total += m.Size
		readers = append(readers, io.NewSectionReader(f, 0, m.Size))
	}
	// Sizes are checked once every part is known to exist, as S3 does.
	for i, size := range sizes[:len(sizes)-1] {
		if size < s.opts.MinPartSize {
			return ObjectInfo{}, fmt.Errorf("%w: part %d is %d bytes, below the minimum of %d", ErrTooSmall, parts[i].PartNumber, size, s.opts.MinPartSize)
		}
	}
	if total > s.opts.MaxObjectSize {
		return ObjectInfo{}, fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, total, s.opts.MaxObjectSize)
	}
	m := &objectMeta{Key: key, ContentType: u.ContentType, Metadata: u.Metadata, Parts: len(parts),
		ETag: hex.EncodeToString(etags.Sum(nil)) + "-" + strconv.Itoa(len(parts))}
	tmp, err := s.concat(ctx, readers, total, m)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := s.commitObject(b, tmp, m); err != nil {
		os.Remove(tmp)
		return ObjectInfo{}, err
	}
	if err := s.removeUpload(uploadID); err != nil {
		s.opts.Logger.Warn("remove completed upload", "upload", uploadID, "err", err)
	}
	return m.info(bucket), nil
}

// concat writes the parts into a new temporary object file.
func (s *Store) concat(ctx context.Context, parts []io.Reader, total int64, m *objectMeta) (path string, err error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, tmpDir), "complete-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	sh := sha256.New()
	n, err := s.copyHashed(ctx, f, io.MultiReader(parts...), total, sh)
	if err != nil {
		return "", err
	}
	if n != total {
		return "", fmt.Errorf("%w: parts hold %d bytes, expected %d", ErrCorrupt, n, total)
	}
	m.Size = n
	m.SHA256 = hex.EncodeToString(sh.Sum(nil))
	return f.Name(), s.finishTemp(f, m)
}

// removeUpload moves an upload directory out of uploads/ in one durable
// rename, then deletes it.
func (s *Store) removeUpload(id string) error {
	grave := filepath.Join(s.dir, tmpDir, "aborted-"+id)
	if err := os.Rename(s.uploadDir(id), grave); err != nil {
		return err
	}
	if err := syncDir(filepath.Join(s.dir, uploadsDir)); err != nil {
		return err
	}
	return os.RemoveAll(grave)
}

// AbortMultipartUpload ends an upload and deletes its parts.
func (s *Store) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := s.bucket(bucket); err != nil {
		return err
	}
	mu := s.uploadLock(uploadID)
	mu.Lock()
	defer mu.Unlock()
	if _, err := s.readUpload(bucket, key, uploadID); err != nil {
		return err
	}
	return s.removeUpload(uploadID)
}

// ListUploads returns the multipart uploads in progress in a bucket.
func (s *Store) ListUploads(ctx context.Context, bucket string) ([]UploadInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := s.bucket(bucket); err != nil {
		return nil, err
	}
	all, err := s.uploads()
	if err != nil {
		return nil, err
	}
	var out []UploadInfo
	for _, u := range all {
		if u.Bucket == bucket {
			out = append(out, u)
		}
	}
	return out, nil
}

func (s *Store) uploads() ([]UploadInfo, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, uploadsDir))
	if err != nil {
		return nil, err
	}
	var out []UploadInfo
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join(s.uploadDir(e.Name()), uploadMeta))
		if isNotExist(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		var u uploadFile
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("%w: upload %s: %v", ErrCorrupt, e.Name(), err)
		}
		out = append(out, UploadInfo{UploadID: e.Name(), Bucket: u.Bucket, Key: u.Key, Started: u.Started})
	}
	return out, nil
}

// SweepUploads removes every multipart upload started more than
// Options.UploadExpiry ago (by Options.Now) and returns how many it removed.
func (s *Store) SweepUploads(ctx context.Context) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	all, err := s.uploads()
	if err != nil {
		return 0, err
	}
	now := s.opts.Now()
	n := 0
	for _, u := range all {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if now.Sub(u.Started) <= s.opts.UploadExpiry {
			continue
		}
		mu := s.uploadLock(u.UploadID)
		mu.Lock()
		err := s.removeUpload(u.UploadID)
		mu.Unlock()
		if err != nil && !isNotExist(err) {
			return n, err
		}
		if err == nil {
			n++
		}
	}
	return n, nil
}
