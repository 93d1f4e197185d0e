package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// The blob routes' own failures; the others are wire's and the engine's
// (wire.ErrNotFound for a missing blob, api.ErrTooLarge, api.ErrInvalid,
// wire.ErrForbidden, ...). Match them with errors.Is.
var (
	// ErrBadDigest: the content did not match the SHA-256 sent with it.
	ErrBadDigest = errors.New("client: content does not match its digest")
	// ErrNoSuchUpload: the upload was never begun, or was committed,
	// aborted or expired.
	ErrNoSuchUpload = errors.New("client: no such upload")
	// ErrNoSuchPart: a commit named a part that was not appended.
	ErrNoSuchPart = errors.New("client: no such part")
	// ErrRange: the range selects no byte of the blob.
	ErrRange = errors.New("client: range not satisfiable")
)

var blobCodes = map[string]error{
	"bad_digest": ErrBadDigest, "no_such_upload": ErrNoSuchUpload,
	"no_such_part": ErrNoSuchPart, "range_not_satisfiable": ErrRange,
}

// BlobInfo describes a blob, as the server's /blob routes answer.
type BlobInfo struct {
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
	Size      int64  `json:"size"`
	// SHA256 is the content's hex SHA-256.
	SHA256   string    `json:"sha256"`
	ETag     string    `json:"etag"`
	Modified time.Time `json:"modified"`
}

// BlobPart describes an appended part of an upload.
type BlobPart struct {
	Number int    `json:"part"`
	Size   int64  `json:"size"`
	ETag   string `json:"etag"`
}

// BlobRange selects bytes of a blob, as an HTTP Range: Start to End
// inclusive (End negative: to the end), or the last Suffix bytes when
// Suffix is positive.
type BlobRange struct {
	Start, End, Suffix int64
}

func (r BlobRange) header() string {
	switch {
	case r.Suffix > 0:
		return "bytes=-" + strconv.FormatInt(r.Suffix, 10)
	case r.End < 0:
		return "bytes=" + strconv.FormatInt(r.Start, 10) + "-"
	}
	return "bytes=" + strconv.FormatInt(r.Start, 10) + "-" + strconv.FormatInt(r.End, 10)
}

// BlobListing is a page of ListBlobs; Next, when set, is the after of the
// next page.
type BlobListing struct {
	Blobs []BlobInfo `json:"blobs"`
	Next  string     `json:"next"`
}

// blobURL is the route of key (the listing's when key is empty) with the
// namespace ("" for the server's default, or a tenant token's own) and
// the query's other pairs.
func (c *HTTP) blobURL(ns, key string, pairs ...string) string {
	q := url.Values{}
	if ns != "" {
		q.Set("namespace", ns)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		q.Set(pairs[i], pairs[i+1])
	}
	u := c.opts.BaseURL + "/blob/" + escapeKey(key)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// escapeKey escapes each of a key's path segments, keeping its slashes.
func escapeKey(key string) string {
	return (&url.URL{Path: key}).EscapedPath()
}

// blobDo sends one blob request; with v it decodes the JSON reply into v.
// A failure returns the server's status as an error.
func (c *HTTP) blobDo(ctx context.Context, method, u string, body io.Reader, sum string, v any) error {
	resp, err := c.blobSend(ctx, method, u, body, sum, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return blobRefusal(resp.StatusCode, reply)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(reply, v)
}

func (c *HTTP) blobSend(ctx context.Context, method, u string, body io.Reader, sum, rng string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if sum != "" {
		req.Header.Set(wire.HeaderContentSHA256, sum)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	return c.hc.Do(req)
}

// blobRefusal is the error of a refused blob request.
func blobRefusal(code int, reply []byte) error {
	var st wire.Status
	if err := json.Unmarshal(reply, &st); err != nil || st.OK {
		return fmt.Errorf("client: /blob: HTTP %d", code)
	}
	if e, ok := blobCodes[st.Code]; ok {
		return fmt.Errorf("%w: %w", e, st.Err())
	}
	return st.Err()
}

// PutBlob stores r's content as key in namespace ns, replacing any blob
// there, once whole and durable. With sum (a hex SHA-256) the server
// checks the content against it (ErrBadDigest, and nothing changes). A
// put is not retried: r is read once.
func (c *HTTP) PutBlob(ctx context.Context, ns, key string, r io.Reader, sum string) (BlobInfo, error) {
	var out struct {
		Blob BlobInfo `json:"blob"`
	}
	err := c.blobDo(ctx, http.MethodPut, c.blobURL(ns, key), r, sum, &out)
	return out.Blob, err
}

// Blob is an open blob: its description and the bytes asked for. Close
// it.
type Blob struct {
	io.ReadCloser
	Info BlobInfo
	// Offset and Length are the bytes Read returns.
	Offset, Length int64
}

// GetBlob opens key of namespace ns, whole or the bytes rng selects; the
// content streams from the server as it is read.
func (c *HTTP) GetBlob(ctx context.Context, ns, key string, rng *BlobRange) (*Blob, error) {
	h := ""
	if rng != nil {
		h = rng.header()
	}
	resp, err := c.blobSend(ctx, http.MethodGet, c.blobURL(ns, key), nil, "", h)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		defer resp.Body.Close()
		reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, blobRefusal(resp.StatusCode, reply)
	}
	b := &Blob{ReadCloser: resp.Body, Length: resp.ContentLength}
	b.Info = BlobInfo{Namespace: ns, Key: key, Size: resp.ContentLength, SHA256: resp.Header.Get(wire.HeaderContentSHA256)}
	if et := resp.Header.Get("ETag"); len(et) >= 2 {
		b.Info.ETag = et[1 : len(et)-1]
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		b.Info.Modified = t
	}
	if resp.StatusCode == http.StatusPartialContent {
		var last int64
		_, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-%d/%d", &b.Offset, &last, &b.Info.Size)
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("client: /blob: Content-Range %q: %w", resp.Header.Get("Content-Range"), err)
		}
	}
	return b, nil
}

// DeleteBlob removes key of namespace ns (wire.ErrNotFound when there is
// none).
func (c *HTTP) DeleteBlob(ctx context.Context, ns, key string) error {
	return c.blobDo(ctx, http.MethodDelete, c.blobURL(ns, key), nil, "", nil)
}

// ListBlobs lists namespace ns's blobs whose keys begin with prefix, in
// key order, after the key after, at most limit (the server's page when
// 0).
func (c *HTTP) ListBlobs(ctx context.Context, ns, prefix, after string, limit int) (BlobListing, error) {
	pairs := []string{"prefix", prefix, "after", after}
	if limit > 0 {
		pairs = append(pairs, "limit", strconv.Itoa(limit))
	}
	var out BlobListing
	err := c.blobDo(ctx, http.MethodGet, c.blobURL(ns, "", pairs...), nil, "", &out)
	return out, err
}

// BeginUpload starts a multipart upload of key in namespace ns and
// returns its id.
func (c *HTTP) BeginUpload(ctx context.Context, ns, key string) (string, error) {
	var out struct {
		UploadID string `json:"upload_id"`
	}
	err := c.blobDo(ctx, http.MethodPost, c.blobURL(ns, key, "uploads", ""), nil, "", &out)
	return out.UploadID, err
}

// UploadPart stores part n (1 to 10000) of the upload, replacing an
// earlier part n; parts may come in any order. With sum the server checks
// the part against it.
func (c *HTTP) UploadPart(ctx context.Context, ns, key, upload string, n int, r io.Reader, sum string) (BlobPart, error) {
	var out struct {
		Part BlobPart `json:"part"`
	}
	err := c.blobDo(ctx, http.MethodPut, c.blobURL(ns, key, "upload_id", upload, "part", strconv.Itoa(n)), r, sum, &out)
	return out.Part, err
}

// CommitUpload makes the upload's parts the blob, in ascending order of
// the numbers given (every part when none are), and ends the upload.
func (c *HTTP) CommitUpload(ctx context.Context, ns, key, upload string, parts ...int) (BlobInfo, error) {
	var body io.Reader
	if len(parts) > 0 {
		b, err := json.Marshal(map[string][]int{"parts": parts})
		if err != nil {
			return BlobInfo{}, err
		}
		body = bytes.NewReader(b)
	}
	var out struct {
		Blob BlobInfo `json:"blob"`
	}
	err := c.blobDo(ctx, http.MethodPost, c.blobURL(ns, key, "upload_id", upload), body, "", &out)
	return out.Blob, err
}

// AbortUpload ends the upload and drops its parts.
func (c *HTTP) AbortUpload(ctx context.Context, ns, key, upload string) error {
	return c.blobDo(ctx, http.MethodDelete, c.blobURL(ns, key, "upload_id", upload), nil, "", nil)
}

// BlobSweep says what a sweep removed: uploads past their expiry, and
// stored contents no blob pointed at.
type BlobSweep struct {
	Uploads int   `json:"uploads"`
	Blobs   int   `json:"blobs"`
	Bytes   int64 `json:"bytes"`
}

// SweepBlobs has the server sweep its blob store now.
func (c *HTTP) SweepBlobs(ctx context.Context) (BlobSweep, error) {
	var out struct {
		Sweep BlobSweep `json:"sweep"`
	}
	err := c.blobDo(ctx, http.MethodPost, c.opts.BaseURL+"/blob?sweep", nil, "", &out)
	return out.Sweep, err
}
