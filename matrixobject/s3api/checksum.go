package s3api

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"strings"
)

// checksumAlgorithms are the x-amz-checksum-* algorithms a body may be
// checked against, by header name.
func newChecksum(header string) hash.Hash {
	switch header {
	case "x-amz-checksum-crc32":
		return crc32.NewIEEE()
	case "x-amz-checksum-crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "x-amz-checksum-crc64nvme":
		// CRC-64/NVME, reflected polynomial.
		return crc64.New(crc64.MakeTable(0x9a6c9329ac4bc9b5))
	case "x-amz-checksum-sha1":
		return sha1.New()
	case "x-amz-checksum-sha256":
		return sha256.New()
	}
	return nil
}

// checksumReader checks a body against a base64 x-amz-checksum-* value
// when it reaches EOF; want is called then, so that a value sent in an
// aws-chunked trailer can be used. A mismatch fails that last Read.
type checksumReader struct {
	r    io.Reader
	name string
	h    hash.Hash
	want func() (string, bool)
}

func (c *checksumReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF {
		want, ok := c.want()
		if !ok {
			return n, newErr("InvalidRequest", http.StatusBadRequest, "The trailer %s announced in x-amz-trailer was not sent.", c.name)
		}
		if got := base64.StdEncoding.EncodeToString(c.h.Sum(nil)); got != strings.TrimSpace(want) {
			return n, newErr("BadDigest", http.StatusBadRequest, "The %s you specified (%s) did not match the calculated checksum (%s).", c.name, want, got)
		}
	}
	return n, err
}
