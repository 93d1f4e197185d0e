package matrixobject

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"
)

// An object file holds the object's bytes from offset 0, then its metadata
// as JSON (the trailer), then a fixed footer:
//
//	[0:4]   trailer length, little endian
//	[4:8]   CRC32C of the trailer
//	[8:16]  magic "MXOBJv1\n"
//
// The data comes first so that it can be streamed to disk before its size
// and digests are known; the footer is found from the end of the file. The
// whole file is written under a temporary name, synced, and renamed into
// place, so data and metadata change together.
const (
	footerSize  = 16
	objectMagic = "MXOBJv1\n"
	maxTrailer  = 1 << 20
	// smallFile is the largest object file readMeta reads whole.
	smallFile = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// objectMeta is the trailer of an object (or part) file.
type objectMeta struct {
	Key         string            `json:"key"`
	Size        int64             `json:"size"`
	ETag        string            `json:"etag"`
	SHA256      string            `json:"sha256,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	ModTime     time.Time         `json:"mtime"`
	Parts       int               `json:"parts,omitempty"`
}

func (m *objectMeta) info(bucket string) ObjectInfo {
	return ObjectInfo{
		Bucket:      bucket,
		Key:         m.Key,
		Size:        m.Size,
		ETag:        m.ETag,
		SHA256:      m.SHA256,
		ContentType: m.ContentType,
		Metadata:    m.Metadata,
		ModTime:     m.ModTime,
		Parts:       m.Parts,
	}
}

// encodeTrailer returns the trailer and footer to write after the data.
func encodeTrailer(m *objectMeta) ([]byte, error) {
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(js) > maxTrailer {
		return nil, fmt.Errorf("%w: metadata of %d bytes", ErrTooLarge, len(js))
	}
	b := make([]byte, len(js)+footerSize)
	copy(b, js)
	f := b[len(js):]
	binary.LittleEndian.PutUint32(f[0:4], uint32(len(js)))
	binary.LittleEndian.PutUint32(f[4:8], crc32.Checksum(js, castagnoli))
	copy(f[8:16], objectMagic)
	return b, nil
}

// decodeFooter parses the footer of a file of fileSize bytes and returns the
// trailer's length and checksum.
func decodeFooter(f []byte, fileSize int64) (n int64, sum uint32, err error) {
	if len(f) != footerSize || string(f[8:16]) != objectMagic {
		return 0, 0, fmt.Errorf("%w: no object footer", ErrCorrupt)
	}
	n = int64(binary.LittleEndian.Uint32(f[0:4]))
	if n > maxTrailer || n+footerSize > fileSize {
		return 0, 0, fmt.Errorf("%w: trailer length %d in a file of %d bytes", ErrCorrupt, n, fileSize)
	}
	return n, binary.LittleEndian.Uint32(f[4:8]), nil
}

// readMeta reads the trailer of an object file and checks that the data
// length it records matches the file.
func readMeta(f *os.File) (*objectMeta, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < footerSize {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrCorrupt, f.Name(), size)
	}
	// A small file is read whole in one pread: one I/O instead of two when
	// it is not cached, and the data is then in the page cache for the
	// read that follows.
	var whole []byte
	if size <= smallFile {
		whole = make([]byte, size)
		if _, err := f.ReadAt(whole, 0); err != nil && err != io.EOF {
			return nil, err
		}
	}
	var foot [footerSize]byte
	if whole != nil {
		copy(foot[:], whole[size-footerSize:])
	} else if _, err := f.ReadAt(foot[:], size-footerSize); err != nil {
		return nil, err
	}
	n, sum, err := decodeFooter(foot[:], size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	var js []byte
	if whole != nil {
		js = whole[size-footerSize-n : size-footerSize]
	} else {
		js = make([]byte, n)
		if _, err := f.ReadAt(js, size-footerSize-n); err != nil && err != io.EOF {
			return nil, err
		}
	}
	if crc32.Checksum(js, castagnoli) != sum {
		return nil, fmt.Errorf("%w: %s: trailer checksum mismatch", ErrCorrupt, f.Name())
	}
	m := new(objectMeta)
	if err := json.Unmarshal(js, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, f.Name(), err)
	}
	if m.Size != size-footerSize-n {
		return nil, fmt.Errorf("%w: %s: data is %d bytes, trailer says %d", ErrCorrupt, f.Name(), size-footerSize-n, m.Size)
	}
	return m, nil
}
