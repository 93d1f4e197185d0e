package s3api

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// Appends, the way S3 Express One Zone does them: a PutObject with
// x-amz-write-offset-bytes: N appends its body to the key if the key is N
// bytes long (N=0 creates it). Here the bytes go to the store's append blob
// of that key; a GetObject or HeadObject of a key that holds no object but
// an append blob serves the blob.

// writeOffsetHeader is the PutObject header that makes it an append.
const writeOffsetHeader = "X-Amz-Write-Offset-Bytes"

// appendReadChunk is how much of an append blob GetObject reads at once.
const appendReadChunk = 256 << 10

// isAppend reports whether a PutObject request is an append: it carries
// x-amz-write-offset-bytes, even empty (which is then refused as invalid).
func isAppend(r *http.Request) bool {
	_, ok := r.Header[writeOffsetHeader]
	return ok
}

func errInvalidRequest(format string, args ...any) *apiError {
	return newErr("InvalidRequest", http.StatusBadRequest, format, args...)
}

// appendETag is the ETag of an append blob of size bytes. A blob only
// grows, so its size tells its versions apart (conditional requests are not
// served, so nothing relies on more).
func appendETag(size int64) string { return fmt.Sprintf(`"append-%d"`, size) }

func (h *Handler) appendObject(req *request) *apiError {
	if req.r.Header.Get("x-amz-copy-source") != "" {
		return errNotImplemented("CopyObject")
	}
	v := strings.TrimSpace(req.r.Header.Get(writeOffsetHeader))
	off, err := strconv.ParseInt(v, 10, 64)
	if err != nil || off < 0 || !isDigits(v) {
		return errInvalidArgument("x-amz-write-offset-bytes %q must be a non-negative integer", v)
	}
	for k := range req.r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-meta-") {
			// Append blobs have no metadata to keep it in.
			return errInvalidRequest("Cannot specify user-defined object metadata with a write offset: append blobs carry none.")
		}
	}
	limit := int64(h.store.Limits().MaxAppendSize)
	if aerr := h.checkLength(req, limit); aerr != nil {
		return aerr
	}
	p, aerr := h.readBody(req, limit, newErr("EntityTooLarge", http.StatusBadRequest, "Your append exceeds the maximum allowed size of %d bytes.", limit))
	if aerr != nil {
		return aerr
	}
	if len(p) == 0 {
		return errInvalidRequest("Request body cannot be empty when 'write offset' is specified.")
	}
	ctx := req.r.Context()
	// An object of the key would hide the blob from reads (an object wins):
	// refuse rather than append bytes nobody can read back.
	if _, err := h.store.HeadObject(ctx, req.bucket, req.key); err == nil {
		return errInvalidRequest("The key %s holds a regular object; only keys without one can be appended to.", req.key)
	} else if !errors.Is(err, matrixobject.ErrNoSuchKey) {
		return toAPIError(err)
	}
	res, err := h.store.AppendAt(ctx, req.bucket, req.key, off, p)
	if err != nil {
		return toAPIError(err)
	}
	hdr := req.w.Header()
	hdr.Set("ETag", appendETag(res.Size))
	hdr.Set("x-amz-object-size", strconv.FormatInt(res.Size, 10))
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// getAppendBlob answers a GetObject or HeadObject of a key that holds no
// object from its append blob. It reports false, having written nothing,
// when there is no blob either.
func (h *Handler) getAppendBlob(req *request, rng matrixobject.Range, kind matrixobject.RangeKind) (*apiError, bool) {
	ctx := req.r.Context()
	size, err := h.store.AppendBlobSize(ctx, req.bucket, req.key)
	if errors.Is(err, matrixobject.ErrNoSuchKey) {
		return nil, false
	}
	if err != nil {
		return toAPIError(err), true
	}
	off, n := int64(0), size
	hdr := req.w.Header()
	if kind != matrixobject.RangeNone {
		var ok bool
		if off, n, ok = resolveRange(rng, kind, size); !ok {
			hdr.Set("Content-Range", fmt.Sprintf("bytes */%d", size))
			return newErr("InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable"), true
		}
	}
	hdr.Set("Content-Type", "binary/octet-stream")
	hdr.Set("ETag", appendETag(size))
	hdr.Set("Accept-Ranges", "bytes")
	hdr.Set("Content-Length", strconv.FormatInt(n, 10))
	status := http.StatusOK
	if kind != matrixobject.RangeNone {
		status = http.StatusPartialContent
		hdr.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, size))
	}
	req.w.WriteHeader(status)
	if req.op == opHeadObject {
		return nil, true
	}
	// The blob only grows and readers see a prefix of it, so the bytes
	// below size stay as they are while they are streamed.
	buf := make([]byte, min(n, appendReadChunk))
	for n > 0 {
		k, err := h.store.ReadAppendBlob(ctx, req.bucket, req.key, off, buf[:min(n, int64(len(buf)))])
		if k > 0 {
			if _, werr := req.w.Write(buf[:k]); werr != nil {
				err = werr
			}
		}
		off, n = off+int64(k), n-int64(k)
		if (err != nil || k == 0) && n > 0 {
			// Deleted meanwhile, or the client went away: the short body
			// tells the client.
			h.opts.Logger.Debug("s3 get interrupted", "id", req.id, "err", err)
			break
		}
	}
	return nil, true
}

// deleteKey removes the object and the append blob of a key; neither need
// exist.
func (h *Handler) deleteKey(req *request, key string) error {
	ctx := req.r.Context()
	if err := h.store.DeleteObject(ctx, req.bucket, key); err != nil && !errors.Is(err, matrixobject.ErrNoSuchKey) {
		return err
	}
	if err := h.store.DeleteAppendBlob(ctx, req.bucket, key); err != nil && !errors.Is(err, matrixobject.ErrNoSuchKey) {
		return err
	}
	return nil
}

// readBody reads a request body whole, up to limit bytes (tooLarge past
// it), verified against the payload hash, Content-MD5 and any
// x-amz-checksum.
func (h *Handler) readBody(req *request, limit int64, tooLarge *apiError) ([]byte, *apiError) {
	body, expectSHA, aerr := h.body(req)
	if aerr != nil {
		return nil, aerr
	}
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, toAPIError(err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge
	}
	if expectSHA != "" && !strings.EqualFold(expectSHA, hex.EncodeToString(sha256Sum(b))) {
		return nil, newErr("XAmzContentSHA256Mismatch", http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	var o matrixobject.PutOptions
	if aerr := bodyOptions(req, &o, ""); aerr != nil {
		return nil, aerr
	}
	if o.ExpectedMD5 != nil && string(o.ExpectedMD5) != string(md5Sum(b)) {
		return nil, newErr("BadDigest", http.StatusBadRequest, "The Content-MD5 you specified did not match what we received.")
	}
	return b, nil
}
