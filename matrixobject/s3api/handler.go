package s3api

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// Defaults of Options.
const (
	DefaultRegion       = "us-east-1"
	DefaultMaxClockSkew = 15 * time.Minute
	DefaultMaxXMLBody   = 1 << 20
	// DefaultAddr is where a server of this API listens unless told
	// otherwise.
	DefaultAddr = "127.0.0.1:9000"
)

// ErrInvalidOptions is wrapped by Options.Validate's errors.
var ErrInvalidOptions = errors.New("s3api: invalid options")

// Options configures a Handler.
type Options struct {
	// Credentials maps access key IDs to secret access keys. Requests must
	// be signed (AWS Signature Version 4) with one of them. Required unless
	// AllowAnonymous is set. Default: none.
	Credentials map[string]string
	// AllowAnonymous serves unsigned requests (signed ones are still
	// checked). Default: false.
	AllowAnonymous bool
	// Scopes confine access keys of Credentials to buckets of a prefix,
	// and to reads, by access key (see Scope). Default: none, every key
	// reaches every bucket.
	Scopes map[string]Scope
	// Region is the only region accepted in a signature's scope. Default:
	// "us-east-1".
	Region string
	// MaxClockSkew is how far a request's x-amz-date may be from Now.
	// Default: 15 minutes.
	MaxClockSkew time.Duration
	// MaxXMLBody bounds the request bodies parsed as XML
	// (CompleteMultipartUpload, DeleteObjects, CreateBucket). Default: 1 MiB.
	MaxXMLBody int64
	// Now is the clock signatures are checked against. Default: time.Now.
	Now func() time.Time
	// Logger receives one debug line per request and internal errors.
	// Default: discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Region == "" {
		o.Region = DefaultRegion
	}
	if o.MaxClockSkew == 0 {
		o.MaxClockSkew = DefaultMaxClockSkew
	}
	if o.MaxXMLBody == 0 {
		o.MaxXMLBody = DefaultMaxXMLBody
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o Options) Validate() error {
	switch {
	case len(o.Credentials) == 0 && !o.AllowAnonymous:
		return fmt.Errorf("%w: no Credentials and AllowAnonymous is off", ErrInvalidOptions)
	case o.MaxClockSkew < 0:
		return fmt.Errorf("%w: negative MaxClockSkew", ErrInvalidOptions)
	case o.MaxXMLBody < 1:
		return fmt.Errorf("%w: MaxXMLBody must be positive", ErrInvalidOptions)
	}
	for k, v := range o.Credentials {
		if k == "" || v == "" || strings.Contains(k, "/") {
			return fmt.Errorf("%w: access key %q: empty key or secret, or a slash in the key", ErrInvalidOptions, k)
		}
	}
	for k, s := range o.Scopes {
		if _, ok := o.Credentials[k]; !ok || s.BucketPrefix == "" {
			return fmt.Errorf("%w: scope of access key %q: not a credential, or no bucket prefix", ErrInvalidOptions, k)
		}
	}
	return nil
}

// Handler serves the S3 API (path-style) over a matrixobject.Store.
type Handler struct {
	store  *matrixobject.Store
	opts   Options
	idBase string
	seq    atomic.Uint64
}

// New returns a Handler for store.
func New(store *matrixobject.Store, opts Options) (*Handler, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	rand.Read(b)
	return &Handler{store: store, opts: opts, idBase: strings.ToUpper(hex.EncodeToString(b))}, nil
}

// request is one request being served.
type request struct {
	w        http.ResponseWriter
	r        *http.Request
	id       string
	op       op
	bucket   string
	key      string
	auth     *authInfo
	resource string
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &request{w: w, r: r, id: fmt.Sprintf("%s%012X", h.idBase, h.seq.Add(1)), resource: r.URL.Path}
	w.Header().Set("x-amz-request-id", req.id)
	w.Header().Set("Server", "matrixobject")
	op, bucket, key, aerr := route(r.Method, r.URL.Path, r.URL.Query())
	if op == opPutObject && isAppend(r) {
		op = opAppendObject
	}
	req.op, req.bucket, req.key = op, bucket, key
	if aerr == nil {
		req.auth, aerr = h.authenticate(r)
	}
	if aerr == nil {
		aerr = h.authorize(req)
	}
	if aerr == nil {
		aerr = h.serve(req)
	}
	if aerr != nil {
		h.writeError(req, aerr)
	}
	h.opts.Logger.Debug("s3", "op", op.String(), "bucket", bucket, "key", key, "id", req.id, "err", aerr)
}

func (h *Handler) writeError(req *request, e *apiError) {
	if e.Status >= 500 && e.Code == "InternalError" {
		h.opts.Logger.Error("s3 internal error", "op", req.op.String(), "id", req.id)
	}
	hdr := req.w.Header()
	hdr.Del("ETag")
	hdr.Del("Content-Length")
	if req.r.Method == http.MethodHead {
		req.w.WriteHeader(e.Status)
		return
	}
	body, _ := xml.Marshal(errorXML{Code: e.Code, Message: e.Message, Resource: req.resource, RequestID: req.id})
	hdr.Set("Content-Type", "application/xml")
	hdr.Set("Content-Length", strconv.Itoa(len(xml.Header)+len(body)))
	req.w.WriteHeader(e.Status)
	io.WriteString(req.w, xml.Header)
	req.w.Write(body)
}

func (h *Handler) writeXML(req *request, status int, v any) *apiError {
	body, err := xml.Marshal(v)
	if err != nil {
		return toAPIError(err)
	}
	hdr := req.w.Header()
	hdr.Set("Content-Type", "application/xml")
	hdr.Set("Content-Length", strconv.Itoa(len(xml.Header)+len(body)))
	req.w.WriteHeader(status)
	io.WriteString(req.w, xml.Header)
	req.w.Write(body)
	return nil
}

func (h *Handler) serve(req *request) *apiError {
	switch req.op {
	case opListBuckets:
		return h.listBuckets(req)
	case opCreateBucket:
		return h.createBucket(req)
	case opDeleteBucket:
		if err := h.store.DeleteBucket(req.r.Context(), req.bucket); err != nil {
			return toAPIError(err)
		}
		req.w.WriteHeader(http.StatusNoContent)
	case opHeadBucket:
		if _, err := h.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
			return toAPIError(err)
		}
		req.w.Header().Set("x-amz-bucket-region", h.opts.Region)
		req.w.WriteHeader(http.StatusOK)
	case opGetBucketLocation:
		if _, err := h.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
			return toAPIError(err)
		}
		region := h.opts.Region
		if region == "us-east-1" {
			region = "" // as S3 answers for us-east-1
		}
		return h.writeXML(req, http.StatusOK, locationXML{NS: s3NS, Region: region})
	case opListObjectsV1, opListObjectsV2:
		return h.listObjects(req)
	case opListMultipartUploads:
		return h.listUploads(req)
	case opDeleteObjects:
		return h.deleteObjects(req)
	case opPutObject:
		return h.putObject(req)
	case opAppendObject:
		return h.appendObject(req)
	case opGetObject, opHeadObject:
		return h.getObject(req)
	case opDeleteObject:
		if err := h.deleteKey(req, req.key); err != nil {
			return toAPIError(err)
		}
		req.w.WriteHeader(http.StatusNoContent)
	case opCreateMultipartUpload:
		id, err := h.store.CreateMultipartUpload(req.r.Context(), req.bucket, req.key, putOptions(req.r))
		if err != nil {
			return toAPIError(err)
		}
		return h.writeXML(req, http.StatusOK, initiateXML{NS: s3NS, Bucket: req.bucket, Key: req.key, UploadID: id})
	case opUploadPart:
		return h.uploadPart(req)
	case opCompleteMultipartUpload:
		return h.completeUpload(req)
	case opAbortMultipartUpload:
		if err := h.store.AbortMultipartUpload(req.r.Context(), req.bucket, req.key, req.r.URL.Query().Get("uploadId")); err != nil {
			return toAPIError(err)
		}
		req.w.WriteHeader(http.StatusNoContent)
	case opListParts:
		return h.listParts(req)
	default:
		return errNotImplemented(req.op.String())
	}
	return nil
}

func (h *Handler) listBuckets(req *request) *apiError {
	bs, err := h.store.ListBuckets(req.r.Context())
	if err != nil {
		return toAPIError(err)
	}
	out := listBucketsXML{NS: s3NS, Owner: h.owner(req)}
	for _, b := range bs {
		if h.visible(req, b.Name) {
			out.Buckets = append(out.Buckets, bucketXML{Name: b.Name, CreationDate: xmlTime(b.Created)})
		}
	}
	return h.writeXML(req, http.StatusOK, out)
}

func (h *Handler) owner(req *request) owner {
	id := "anonymous"
	if req.auth != nil && req.auth.accessKey != "" {
		id = req.auth.accessKey
	}
	return owner{ID: id, DisplayName: id}
}

func (h *Handler) createBucket(req *request) *apiError {
	if _, aerr := h.readSmallBody(req); aerr != nil {
		return aerr
	}
	if err := h.store.CreateBucket(req.r.Context(), req.bucket, matrixobject.Quota{}); err != nil {
		return toAPIError(err)
	}
	req.w.Header().Set("Location", "/"+req.bucket)
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// readSmallBody reads an XML request body, verifying it against the
// payload hash, Content-MD5 and any x-amz-checksum.
func (h *Handler) readSmallBody(req *request) ([]byte, *apiError) {
	return h.readBody(req, h.opts.MaxXMLBody, newErr("MaxMessageLengthExceeded", http.StatusBadRequest, "Your request was too big."))
}

// listQuery parses the ListObjects(V2) query parameters.
func listQuery(q url.Values, v2 bool) (matrixobject.ListOptions, int, string, *apiError) {
	o := matrixobject.ListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter")}
	maxKeys := matrixobject.MaxListKeys
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return o, 0, "", errInvalidArgument("max-keys must be a non-negative integer")
		}
		maxKeys = min(n, matrixobject.MaxListKeys)
	}
	o.MaxKeys = maxKeys
	enc := q.Get("encoding-type")
	if enc != "" && enc != "url" {
		return o, 0, "", errInvalidArgument("Invalid Encoding Method specified in Request")
	}
	if v2 {
		o.StartAfter = q.Get("start-after")
		if tok := q.Get("continuation-token"); tok != "" {
			if _, err := matrixobject.DecodeContinuationToken(tok); err != nil {
				return o, 0, "", errInvalidArgument("The continuation token provided is incorrect")
			}
			o.ContinuationToken = tok
		}
	} else {
		o.StartAfter = q.Get("marker")
	}
	return o, maxKeys, enc, nil
}

func (h *Handler) listObjects(req *request) *apiError {
	q := req.r.URL.Query()
	v2 := req.op == opListObjectsV2
	o, maxKeys, enc, aerr := listQuery(q, v2)
	if aerr != nil {
		return aerr
	}
	var res matrixobject.ListResult
	if maxKeys > 0 {
		var err error
		if res, err = h.store.ListObjects(req.r.Context(), req.bucket, o); err != nil {
			return toAPIError(err)
		}
	} else if _, err := h.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
		return toAPIError(err)
	}
	escape := func(s string) string {
		if enc == "url" {
			return url.QueryEscape(s)
		}
		return s
	}
	var own *owner
	if v2 && q.Get("fetch-owner") == "true" || !v2 {
		o := h.owner(req)
		own = &o
	}
	contents := make([]objectXML, 0, len(res.Objects))
	for _, ob := range res.Objects {
		contents = append(contents, objectXML{Key: escape(ob.Key), LastModified: xmlTime(ob.ModTime), ETag: `"` + ob.ETag + `"`, Size: ob.Size, StorageClass: "STANDARD", Owner: own})
	}
	prefixes := make([]prefixXML, 0, len(res.CommonPrefixes))
	for _, p := range res.CommonPrefixes {
		prefixes = append(prefixes, prefixXML{Prefix: escape(p)})
	}
	if v2 {
		return h.writeXML(req, http.StatusOK, listObjectsV2XML{
			NS: s3NS, Name: req.bucket, Prefix: escape(o.Prefix), Delimiter: escape(o.Delimiter), MaxKeys: maxKeys,
			KeyCount: len(contents) + len(prefixes), IsTruncated: res.IsTruncated,
			ContinuationToken: o.ContinuationToken, NextContinuationToken: res.NextContinuationToken,
			StartAfter: escape(o.StartAfter), EncodingType: enc, Contents: contents, CommonPrefixes: prefixes,
		})
	}
	out := listObjectsV1XML{
		NS: s3NS, Name: req.bucket, Prefix: escape(o.Prefix), Marker: escape(o.StartAfter), Delimiter: escape(o.Delimiter),
		MaxKeys: maxKeys, IsTruncated: res.IsTruncated, EncodingType: enc, Contents: contents, CommonPrefixes: prefixes,
	}
	if res.IsTruncated {
		last, _ := matrixobject.DecodeContinuationToken(res.NextContinuationToken)
		out.NextMarker = escape(last)
	}
	return h.writeXML(req, http.StatusOK, out)
}

// putOptions reads Content-Type and x-amz-meta-* headers.
func putOptions(r *http.Request) matrixobject.PutOptions {
	o := matrixobject.PutOptions{ContentType: r.Header.Get("Content-Type")}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if name, ok := strings.CutPrefix(lk, "x-amz-meta-"); ok && name != "" {
			if o.Metadata == nil {
				o.Metadata = map[string]string{}
			}
			o.Metadata[name] = strings.Join(vs, ",")
		}
	}
	return o
}

// bodyOptions completes o with the digests the request carries.
func bodyOptions(req *request, o *matrixobject.PutOptions, expectSHA string) *apiError {
	o.ExpectedSHA256 = expectSHA
	if md := req.r.Header.Get("Content-MD5"); md != "" {
		b, err := base64.StdEncoding.DecodeString(md)
		if err != nil || len(b) != 16 {
			return newErr("InvalidDigest", http.StatusBadRequest, "The Content-MD5 you specified is not valid.")
		}
		o.ExpectedMD5 = b
	}
	return nil
}

func (h *Handler) checkLength(req *request, limit int64) *apiError {
	n := req.r.ContentLength
	if v := req.r.Header.Get("x-amz-decoded-content-length"); v != "" {
		d, err := strconv.ParseInt(v, 10, 64)
		if err != nil || d < 0 {
			return errInvalidArgument("x-amz-decoded-content-length %q is not a length", v)
		}
		n = d
	}
	if n > limit {
		return newErr("EntityTooLarge", http.StatusBadRequest, "Your proposed upload of %d bytes exceeds the maximum allowed size of %d bytes.", n, limit)
	}
	return nil
}

func (h *Handler) putObject(req *request) *apiError {
	if req.r.Header.Get("x-amz-copy-source") != "" {
		return errNotImplemented("CopyObject")
	}
	if aerr := h.checkLength(req, h.store.Limits().MaxPutSize); aerr != nil {
		return aerr
	}
	body, expectSHA, aerr := h.body(req)
	if aerr != nil {
		return aerr
	}
	o := putOptions(req.r)
	if aerr := bodyOptions(req, &o, expectSHA); aerr != nil {
		return aerr
	}
	info, err := h.store.PutObject(req.r.Context(), req.bucket, req.key, body, o)
	if err != nil {
		return toAPIError(err)
	}
	req.w.Header().Set("ETag", `"`+info.ETag+`"`)
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) uploadPart(req *request) *apiError {
	q := req.r.URL.Query()
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > h.store.Limits().MaxParts {
		return errInvalidArgument("Part number must be an integer between 1 and %d, inclusive", h.store.Limits().MaxParts)
	}
	if aerr := h.checkLength(req, h.store.Limits().MaxPartSize); aerr != nil {
		return aerr
	}
	body, expectSHA, aerr := h.body(req)
	if aerr != nil {
		return aerr
	}
	var o matrixobject.PutOptions
	if aerr := bodyOptions(req, &o, expectSHA); aerr != nil {
		return aerr
	}
	pi, err := h.store.UploadPart(req.r.Context(), req.bucket, req.key, q.Get("uploadId"), n, body, o)
	if err != nil {
		return toAPIError(err)
	}
	req.w.Header().Set("ETag", `"`+pi.ETag+`"`)
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// parseCompleteBody parses a CompleteMultipartUpload request body.
func parseCompleteBody(b []byte) ([]matrixobject.CompletedPart, *apiError) {
	var in completeRequestXML
	if err := xml.Unmarshal(b, &in); err != nil || len(in.Parts) == 0 {
		return nil, errMalformedXML()
	}
	parts := make([]matrixobject.CompletedPart, len(in.Parts))
	for i, p := range in.Parts {
		if p.PartNumber < 1 || strings.TrimSpace(p.ETag) == "" {
			return nil, errMalformedXML()
		}
		parts[i] = matrixobject.CompletedPart{PartNumber: p.PartNumber, ETag: strings.TrimSpace(p.ETag)}
	}
	return parts, nil
}

func (h *Handler) completeUpload(req *request) *apiError {
	b, aerr := h.readSmallBody(req)
	if aerr != nil {
		return aerr
	}
	parts, aerr := parseCompleteBody(b)
	if aerr != nil {
		return aerr
	}
	info, err := h.store.CompleteMultipartUpload(req.r.Context(), req.bucket, req.key, req.r.URL.Query().Get("uploadId"), parts)
	if err != nil {
		return toAPIError(err)
	}
	loc := "/" + req.bucket + "/" + awsEscape(req.key, true)
	return h.writeXML(req, http.StatusOK, completeXML{NS: s3NS, Location: loc, Bucket: req.bucket, Key: req.key, ETag: `"` + info.ETag + `"`})
}

func (h *Handler) listParts(req *request) *apiError {
	id := req.r.URL.Query().Get("uploadId")
	parts, err := h.store.ListParts(req.r.Context(), req.bucket, req.key, id)
	if err != nil {
		return toAPIError(err)
	}
	out := listPartsXML{NS: s3NS, Bucket: req.bucket, Key: req.key, UploadID: id}
	for _, p := range parts {
		out.Parts = append(out.Parts, partXML{PartNumber: p.PartNumber, LastModified: xmlTime(p.ModTime), ETag: `"` + p.ETag + `"`, Size: p.Size})
	}
	return h.writeXML(req, http.StatusOK, out)
}

func (h *Handler) listUploads(req *request) *apiError {
	ups, err := h.store.ListUploads(req.r.Context(), req.bucket)
	if err != nil {
		return toAPIError(err)
	}
	out := listUploadsXML{NS: s3NS, Bucket: req.bucket}
	for _, u := range ups {
		out.Uploads = append(out.Uploads, uploadXML{Key: u.Key, UploadID: u.UploadID, Initiated: xmlTime(u.Started)})
	}
	return h.writeXML(req, http.StatusOK, out)
}

func (h *Handler) deleteObjects(req *request) *apiError {
	b, aerr := h.readSmallBody(req)
	if aerr != nil {
		return aerr
	}
	var in deleteRequestXML
	if err := xml.Unmarshal(b, &in); err != nil || len(in.Objects) > 1000 {
		return errMalformedXML()
	}
	if _, err := h.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
		return toAPIError(err)
	}
	out := deleteResultXML{NS: s3NS}
	for _, o := range in.Objects {
		if err := h.deleteKey(req, o.Key); err != nil {
			ae := toAPIError(err)
			out.Errors = append(out.Errors, deleteErrorXML{Key: o.Key, Code: ae.Code, Message: ae.Message})
			continue
		}
		if !in.Quiet {
			out.Deleted = append(out.Deleted, deletedXML{Key: o.Key})
		}
	}
	return h.writeXML(req, http.StatusOK, out)
}

func (h *Handler) getObject(req *request) *apiError {
	ctx := req.r.Context()
	var o matrixobject.GetOptions
	rng, kind := matrixobject.ParseRangeHeader(req.r.Header.Get("Range"))
	switch kind {
	case matrixobject.RangeOne:
		o.Range = &rng
	case matrixobject.RangeUnsatisfiable:
		o.Range = &matrixobject.Range{Start: 1<<63 - 1, End: -1}
	}
	obj, err := h.store.GetObject(ctx, req.bucket, req.key, o)
	if errors.Is(err, matrixobject.ErrNoSuchKey) {
		// No object: the key's append blob, if it has one.
		if aerr, ok := h.getAppendBlob(req, rng, kind); ok {
			return aerr
		}
	}
	if errors.Is(err, matrixobject.ErrInvalidRange) {
		if info, herr := h.store.HeadObject(ctx, req.bucket, req.key); herr == nil {
			req.w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", info.Size))
		}
		return newErr("InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable")
	}
	if err != nil {
		return toAPIError(err)
	}
	defer obj.Close()
	info := obj.Info
	hdr := req.w.Header()
	ct := info.ContentType
	if ct == "" {
		ct = "binary/octet-stream"
	}
	hdr.Set("Content-Type", ct)
	hdr.Set("ETag", `"`+info.ETag+`"`)
	hdr.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	hdr.Set("Accept-Ranges", "bytes")
	hdr.Set("Content-Length", strconv.FormatInt(obj.Length, 10))
	if info.Parts > 0 {
		hdr.Set("x-amz-mp-parts-count", strconv.Itoa(info.Parts))
	}
	for k, v := range info.Metadata {
		hdr["X-Amz-Meta-"+k] = []string{v}
	}
	status := http.StatusOK
	if o.Range != nil {
		status = http.StatusPartialContent
		hdr.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", obj.Offset, obj.Offset+obj.Length-1, info.Size))
	}
	req.w.WriteHeader(status)
	if req.op == opHeadObject {
		return nil
	}
	if _, err := obj.WriteTo(req.w); err != nil {
		h.opts.Logger.Debug("s3 get interrupted", "id", req.id, "err", err)
	}
	return nil
}
