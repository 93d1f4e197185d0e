package sharedlog

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultS3Region is the region S3Options.Region defaults to.
const DefaultS3Region = "us-east-1"

// S3Options configures an S3Store.
type S3Options struct {
	// Endpoint is the base URL of the S3 API, addressed path-style
	// (Endpoint/bucket/name): "http://10.0.0.9:9000", say. Required.
	Endpoint string
	// Bucket holds the store's append blobs and objects; it is created if
	// missing. Required.
	Bucket string
	// AccessKey and SecretKey sign every request with AWS Signature
	// Version 4. Give both or neither; without them requests go unsigned,
	// for a server that serves anonymous requests. Default: none.
	AccessKey, SecretKey string
	// Region is the region of the signatures' scope. Default:
	// DefaultS3Region.
	Region string
	// Client sends the requests; their contexts bound them. Default: a
	// client of the store's own that keeps up to 64 idle connections to
	// the endpoint (followers poll it often), closed by Close.
	Client *http.Client
}

// S3Store is a Store on an S3-compatible object store reached over HTTP,
// such as matrixobject's (matrixobject/s3api) shared by members on several
// machines. Segments are appended the way S3 Express One Zone appends
// (PutObject with x-amz-write-offset-bytes, refused with InvalidWriteOffset
// unless the offset is the blob's size), so the server decides which of
// racing writers wins; the front and snapshot are plain objects. It uses
// the standard library only. It is safe for concurrent use.
//
// Requests are path-style and signed with AWS Signature Version 4 from
// static keys: Amazon's own directory buckets, which want virtual-hosted
// addressing and CreateSession credentials, are out of its reach.
//
// An append the server made but whose answer was lost fails with an error
// other than ErrConflict (its outcome is unknown); it is never retried, as
// a retry would find the blob grown and say ErrConflict for bytes that are
// in the log.
type S3Store struct {
	base   url.URL
	bucket string
	opts   S3Options
	client *http.Client
	own    *http.Transport // the default client's, closed by Close
}

var _ Store = (*S3Store)(nil)

// S3Error is an error answer of the S3 API: its HTTP status and S3 error
// code (empty when the answer had no error document, as to a HEAD). The
// Store's sentinel errors wrap it where they apply.
type S3Error struct {
	Op      string // "PUT", "GET", ...
	Name    string // the blob, object or bucket
	Status  int
	Code    string
	Message string
}

func (e *S3Error) Error() string {
	msg := e.Code
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("sharedlog: s3 %s %s: %d %s", e.Op, e.Name, e.Status, msg)
}

// NewS3Store returns the Store in o.Bucket at o.Endpoint, creating the
// bucket if it is missing.
func NewS3Store(ctx context.Context, o S3Options) (*S3Store, error) {
	if o.Region == "" {
		o.Region = DefaultS3Region
	}
	base, err := url.Parse(o.Endpoint)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: S3 endpoint %q: %v", ErrInvalidOptions, o.Endpoint, err)
	case base.Scheme != "http" && base.Scheme != "https", base.Host == "", base.RawQuery != "", base.Fragment != "":
		return nil, fmt.Errorf("%w: S3 endpoint %q is not an http(s)://host[:port][/path] URL", ErrInvalidOptions, o.Endpoint)
	case o.Bucket == "" || strings.Contains(o.Bucket, "/"):
		return nil, fmt.Errorf("%w: S3 bucket %q", ErrInvalidOptions, o.Bucket)
	case (o.AccessKey == "") != (o.SecretKey == ""):
		return nil, fmt.Errorf("%w: S3 AccessKey and SecretKey go together", ErrInvalidOptions)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	s := &S3Store{base: *base, bucket: o.Bucket, opts: o, client: o.Client}
	if s.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		s.own, s.client = t, &http.Client{Transport: t}
	}
	if err := s.createBucket(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the idle connections of the store's own client.
func (s *S3Store) Close() error {
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
	return nil
}

func (s *S3Store) createBucket(ctx context.Context) error {
	var body []byte
	if s.opts.Region != DefaultS3Region {
		// S3 creates a bucket elsewhere than us-east-1 only when told.
		body = fmt.Appendf(nil, `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>%s</LocationConstraint></CreateBucketConfiguration>`, s.opts.Region)
	}
	resp, err := s.do(ctx, http.MethodPut, "", body, nil)
	if err != nil {
		return fmt.Errorf("sharedlog: S3 bucket %s: %w", s.bucket, err)
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	err = s.fail(resp, "")
	var e *S3Error
	if errors.As(err, &e) {
		switch {
		case e.Code == "BucketAlreadyOwnedByYou", e.Code == "BucketAlreadyExists":
			return nil
		case e.Status == http.StatusForbidden && e.Code == "AccessDenied":
			// Keys that may not create buckets may still use one that
			// exists.
			if herr := s.headBucket(ctx); herr == nil {
				return nil
			}
		}
	}
	return fmt.Errorf("sharedlog: S3 bucket %s: %w", s.bucket, err)
}

func (s *S3Store) headBucket(ctx context.Context) error {
	resp, err := s.do(ctx, http.MethodHead, "", nil, nil)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return s.fail(resp, "")
	}
	return nil
}

func checkName(name string) error {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return fmt.Errorf("%w: name %q", ErrInvalidOptions, name)
	}
	return nil
}

// AppendAt implements Store: a PutObject with x-amz-write-offset-bytes.
// S3 refuses empty appends, so an empty p only checks the condition: it
// does not create a blob that does not exist.
func (s *S3Store) AppendAt(ctx context.Context, name string, off int64, p []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if len(p) == 0 {
		size, err := s.Size(ctx, name)
		if errors.Is(err, ErrNotExist) {
			size, err = 0, nil
		}
		if err == nil && size != off {
			err = fmt.Errorf("%w: %s is %d bytes, not %d", ErrConflict, name, size, off)
		}
		return err
	}
	resp, err := s.do(ctx, http.MethodPut, name, p, map[string]string{"x-amz-write-offset-bytes": strconv.FormatInt(off, 10)})
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return s.fail(resp, name)
	}
	if v := resp.Header.Get("x-amz-object-size"); v != "" && v != strconv.FormatInt(off+int64(len(p)), 10) {
		// Not what an append at off makes: something other than this
		// append happened, so its outcome is unknown.
		return fmt.Errorf("sharedlog: s3 append to %s at %d of %d bytes: the server says the blob is %s bytes", name, off, len(p), v)
	}
	return nil
}

// ReadAt implements Store: a GetObject of the range.
func (s *S3Store) ReadAt(ctx context.Context, name string, off int64, p []byte) (int, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("sharedlog: s3 read of %s at negative offset %d", name, off)
	}
	if len(p) == 0 {
		_, err := s.Size(ctx, name)
		return 0, err
	}
	last := off + int64(len(p)) - 1
	resp, err := s.do(ctx, http.MethodGet, name, nil, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", off, last)})
	if err != nil {
		return 0, err
	}
	defer drain(resp)
	var n int64 // the bytes the answer holds for p
	switch resp.StatusCode {
	case http.StatusPartialContent:
		first, end, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || first != off || end > last {
			return 0, fmt.Errorf("sharedlog: s3 read of %s: Content-Range %q for bytes %d-%d", name, resp.Header.Get("Content-Range"), off, last)
		}
		n = end - first + 1
	case http.StatusOK:
		// A server that ignores Range sends the whole blob.
		if resp.ContentLength < 0 {
			return 0, fmt.Errorf("sharedlog: s3 read of %s: a whole answer of unknown length", name)
		}
		if off >= resp.ContentLength {
			return 0, io.EOF
		}
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			return 0, fmt.Errorf("sharedlog: s3 read of %s: %w", name, err)
		}
		n = min(int64(len(p)), resp.ContentLength-off)
	case http.StatusRequestedRangeNotSatisfiable:
		return 0, io.EOF // off is at or past the end
	default:
		return 0, s.fail(resp, name)
	}
	k, err := io.ReadFull(resp.Body, p[:n])
	if err != nil {
		// Fewer bytes than the answer announced: cut off, not the end.
		return k, fmt.Errorf("sharedlog: s3 read of %s: %w", name, err)
	}
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

// parseContentRange parses "bytes first-last/size".
func parseContentRange(v string) (first, last int64, ok bool) {
	spec, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, _, found := strings.Cut(spec, "/")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return 0, 0, false
	}
	return first, last, true
}

// Size implements Store: a HeadObject's Content-Length.
func (s *S3Store) Size(ctx context.Context, name string) (int64, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	resp, err := s.do(ctx, http.MethodHead, name, nil, nil)
	if err != nil {
		return 0, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return 0, s.fail(resp, name)
	}
	n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("sharedlog: s3 size of %s: Content-Length %q", name, resp.Header.Get("Content-Length"))
	}
	return n, nil
}

// Put implements Store: a PutObject, which S3 makes atomic and durable.
func (s *S3Store) Put(ctx context.Context, name string, p []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	resp, err := s.do(ctx, http.MethodPut, name, p, nil)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return s.fail(resp, name)
	}
	return nil
}

// Get implements Store: a GetObject.
func (s *S3Store) Get(ctx context.Context, name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	resp, err := s.do(ctx, http.MethodGet, name, nil, nil)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, s.fail(resp, name)
	}
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.ContentLength >= 0 && int64(len(b)) != resp.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("sharedlog: s3 get of %s: %w", name, err)
	}
	return b, nil
}

// Delete implements Store: a DeleteObject, which removes the append blob
// as well as the object.
func (s *S3Store) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	resp, err := s.do(ctx, http.MethodDelete, name, nil, nil)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		if err := s.fail(resp, name); !errors.Is(err, ErrNotExist) {
			return err
		}
	}
	return nil
}

// Cut implements Store: an S3 append is all or nothing, never torn.
func (s *S3Store) Cut(context.Context, string, int64, int64) error {
	return fmt.Errorf("%w: S3 appends are never torn", ErrUnsupported)
}

// fail turns an error answer into an error: InvalidWriteOffset wraps
// ErrConflict, NoSuchKey (or a bodiless 404, as HEAD gets) ErrNotExist.
func (s *S3Store) fail(resp *http.Response, name string) error {
	e := &S3Error{Op: resp.Request.Method, Name: strings.TrimSuffix(s.bucket+"/"+name, "/"), Status: resp.StatusCode}
	var doc struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); len(b) > 0 && xml.Unmarshal(b, &doc) == nil {
		e.Code, e.Message = doc.Code, doc.Message
	}
	switch {
	case e.Code == "InvalidWriteOffset":
		return fmt.Errorf("%w: %w", ErrConflict, e)
	case e.Code == "NoSuchKey", e.Code == "" && e.Status == http.StatusNotFound:
		return fmt.Errorf("%w: %w", ErrNotExist, e)
	}
	return e
}

// drain reads what is left of an answer's body (a little) and closes it,
// so that its connection is reused.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// do sends a request for name (the bucket itself when name is empty) with
// body and the headers hdr, signed when the store has keys.
func (s *S3Store) do(ctx context.Context, method, name string, body []byte, hdr map[string]string) (*http.Response, error) {
	u := s.base
	u.Path += "/" + s.bucket
	if name != "" {
		u.Path += "/" + name
	}
	// The path as signed is the path as sent: each byte but the
	// unreserved ones and '/' escaped, as SigV4 wants.
	u.RawPath = awsEscape(u.Path)
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if s.opts.AccessKey != "" {
		s.sign(req, body, time.Now())
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sharedlog: s3 %s %s/%s: %w", method, s.bucket, name, err)
	}
	return resp, nil
}

// sign adds AWS Signature Version 4 headers to r, whose body is body: the
// payload's SHA-256 (which the server checks), and a signature of the
// method, path, host and x-amz-* headers.
func (s *S3Store) sign(r *http.Request, body []byte, now time.Time) {
	amzDate := now.UTC().Format("20060102T150405Z")
	day := amzDate[:8]
	payload := sha256.Sum256(body)
	r.Header.Set("X-Amz-Date", amzDate)
	r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(payload[:]))
	signed := []string{"host"}
	for k := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") {
			signed = append(signed, lk)
		}
	}
	slices.Sort(signed)
	var c strings.Builder
	// The server re-escapes the path it decoded: so does the canonical
	// request. There is never a query.
	c.WriteString(r.Method + "\n" + awsEscape(r.URL.Path) + "\n\n")
	for _, h := range signed {
		v := r.Host
		if h != "host" {
			v = strings.Join(strings.Fields(strings.Join(r.Header.Values(h), ",")), " ")
		}
		c.WriteString(h + ":" + v + "\n")
	}
	c.WriteString("\n" + strings.Join(signed, ";") + "\n" + hex.EncodeToString(payload[:]))
	scope := day + "/" + s.opts.Region + "/s3/aws4_request"
	creq := sha256.Sum256([]byte(c.String()))
	sts := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(creq[:])
	key := hmacSHA256([]byte("AWS4"+s.opts.SecretKey), day)
	key = hmacSHA256(key, s.opts.Region)
	key = hmacSHA256(key, "s3")
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, sts))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+s.opts.AccessKey+"/"+scope+", SignedHeaders="+strings.Join(signed, ";")+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// awsEscape percent-encodes a path as SigV4 does for S3: every byte but
// A-Z a-z 0-9 - _ . ~ and '/' as %XX, upper case.
func awsEscape(p string) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		}
	}
	return b.String()
}
