package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/blob"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Blob routes' status codes, beside the common ones.
const (
	// CodeBadDigest: the content does not match X-Content-SHA256 (400).
	CodeBadDigest = "bad_digest"
	// CodeNoSuchUpload: an upload never begun, or already committed,
	// aborted or expired (404).
	CodeNoSuchUpload = "no_such_upload"
	// CodeNoSuchPart: a commit named a part that was not appended (400).
	CodeNoSuchPart = "no_such_part"
	// CodeRangeNotSatisfiable: a Range that selects nothing (416).
	CodeRangeNotSatisfiable = "range_not_satisfiable"
)

// HeaderContentSHA256 carries a blob's or a part's hex SHA-256: checked
// on the way in, given on the way out.
const HeaderContentSHA256 = wire.HeaderContentSHA256

const blobRoute = "/blob"

// blobReq is a /blob request's addressing: the key is the path after
// /blob/, the namespace the query's (a tenant token's own by default).
type blobReq struct {
	ns, key string
	q       url.Values
}

// blobs serves /blob/<key> and /blob (see the package doc).
func (h *Handler) blobs(w http.ResponseWriter, r *http.Request) {
	acc, tenant := h.access(r)
	if acc == accessNone {
		h.unauthorized(w, blobRoute, false, false)
		return
	}
	q := r.URL.Query()
	req := blobReq{ns: q.Get("namespace"), key: strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, blobRoute), "/"), q: q}
	switch {
	case tenant != "" && req.ns == "":
		req.ns = tenant
	case req.ns == "":
		req.ns = ts.DefaultNamespace
	case tenant != "" && req.ns != tenant:
		h.sendStatus(w, blobRoute, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: fmt.Sprintf("a token of tenant %q cannot reach namespace %q", tenant, req.ns)})
		return
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if !read && acc != accessWrite {
		h.sendStatus(w, blobRoute, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a read-only token cannot change blobs"})
		return
	}
	_, uploads := q["uploads"]
	upload := q.Get("upload_id")
	_, sweep := q["sweep"]
	switch {
	case req.key == "" && sweep:
		if h.method(w, r, blobRoute, http.MethodPost) {
			rep, err := h.opts.Blobs.Sweep(r.Context())
			h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "sweep": rep})
		}
	case req.key == "":
		if h.method(w, r, blobRoute, http.MethodGet) {
			h.blobList(w, r, req)
		}
	case uploads:
		if h.method(w, r, blobRoute, http.MethodPost) {
			id, err := h.opts.Blobs.Begin(r.Context(), req.ns, req.key)
			h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "upload_id": id})
		}
	case upload != "":
		h.blobUpload(w, r, req, upload)
	default:
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.blobGet(w, r, req)
		case http.MethodPut, http.MethodPost:
			info, err := h.opts.Blobs.Put(r.Context(), req.ns, req.key, r.Body, r.Header.Get(HeaderContentSHA256))
			h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "blob": info})
		case http.MethodDelete:
			err := h.opts.Blobs.Delete(r.Context(), req.ns, req.key)
			h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus})
		default:
			h.method(w, r, blobRoute, http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete)
		}
	}
}

var okStatus = Status{OK: true, Code: CodeOK}

// blobUpload serves one upload's routes: PUT a part, GET its parts, POST
// the commit ({"parts": [...]} or every part), DELETE the abort.
func (h *Handler) blobUpload(w http.ResponseWriter, r *http.Request, req blobReq, upload string) {
	ctx := r.Context()
	switch r.Method {
	case http.MethodPut:
		n, err := strconv.Atoi(req.q.Get("part"))
		if err != nil {
			h.sendStatus(w, blobRoute, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: "part must be a part number, 1 to 10000"})
			return
		}
		p, err := h.opts.Blobs.Append(ctx, req.ns, req.key, upload, n, r.Body, r.Header.Get(HeaderContentSHA256))
		h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "part": p})
	case http.MethodGet:
		ps, err := h.opts.Blobs.Parts(ctx, req.ns, req.key, upload)
		h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "parts": ps})
	case http.MethodPost:
		var body struct {
			Parts []int `json:"parts"`
		}
		if r.ContentLength != 0 {
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
				h.sendStatus(w, blobRoute, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: err.Error()})
				return
			}
		}
		info, err := h.opts.Blobs.Commit(ctx, req.ns, req.key, upload, body.Parts)
		h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "blob": info})
	case http.MethodDelete:
		err := h.opts.Blobs.Abort(ctx, req.ns, req.key, upload)
		h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus})
	default:
		h.method(w, r, blobRoute, http.MethodPut, http.MethodGet, http.MethodPost, http.MethodDelete)
	}
}

// blobList serves GET /blob?namespace=&prefix=&after=&limit=.
func (h *Handler) blobList(w http.ResponseWriter, r *http.Request, req blobReq) {
	limit := 0
	if s := req.q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			h.sendStatus(w, blobRoute, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: "limit must be a positive integer"})
			return
		}
		limit = n
	}
	l, err := h.opts.Blobs.List(r.Context(), req.ns, req.q.Get("prefix"), req.q.Get("after"), limit)
	h.blobReply(w, err, http.StatusOK, map[string]any{"status": okStatus, "blobs": l.Blobs, "next": l.Next})
}

// blobGet streams a blob, or the single byte range its Range header asks
// for (206; 416 when it selects nothing; a header of several ranges or a
// bad one is ignored, as RFC 9110 allows).
func (h *Handler) blobGet(w http.ResponseWriter, r *http.Request, req blobReq) {
	rng, unsatisfiable := blob.ParseRange(r.Header.Get("Range"))
	if unsatisfiable {
		rng = &blob.Range{Start: 1 << 62} // past any blob: answered 416
	}
	rd, err := h.opts.Blobs.Open(r.Context(), req.ns, req.key, rng)
	if errors.Is(err, blob.ErrRange) {
		if info, serr := h.opts.Blobs.Stat(r.Context(), req.ns, req.key); serr == nil {
			w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
		}
	}
	if err != nil {
		h.blobReply(w, err, 0, nil)
		return
	}
	defer rd.Close()
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("ETag", `"`+rd.Info.ETag+`"`)
	hd.Set("Last-Modified", rd.Info.Modified.UTC().Format(http.TimeFormat))
	if rd.Info.SHA256 != "" {
		hd.Set(HeaderContentSHA256, rd.Info.SHA256)
	}
	hd.Set("Content-Length", strconv.FormatInt(rd.Length, 10))
	code := http.StatusOK
	if rng != nil {
		code = http.StatusPartialContent
		hd.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", rd.Offset, rd.Offset+rd.Length-1, rd.Info.Size))
	}
	w.WriteHeader(code)
	h.metrics.request(blobRoute, code)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, rd); err != nil {
		h.opts.Logger.Debug("blob read cut short", "namespace", req.ns, "key", req.key, "err", err)
	}
}

// blobReply answers v with code, or the status err maps to.
func (h *Handler) blobReply(w http.ResponseWriter, err error, code int, v any) {
	if err == nil {
		h.sendJSON(w, blobRoute, code, v)
		return
	}
	var tooLarge *http.MaxBytesError
	s := Status{Code: CodeInternal, Message: err.Error()}
	code = http.StatusInternalServerError
	switch {
	case errors.Is(err, blob.ErrInvalid):
		code, s.Code = http.StatusBadRequest, "invalid_argument"
	case errors.Is(err, blob.ErrBadDigest):
		code, s.Code = http.StatusBadRequest, CodeBadDigest
	case errors.Is(err, blob.ErrNoSuchPart):
		code, s.Code = http.StatusBadRequest, CodeNoSuchPart
	case errors.Is(err, blob.ErrNotFound):
		code, s.Code = http.StatusNotFound, CodeNotFound
	case errors.Is(err, blob.ErrNoSuchUpload):
		code, s.Code = http.StatusNotFound, CodeNoSuchUpload
	case errors.Is(err, blob.ErrTooLarge), errors.As(err, &tooLarge):
		code, s.Code = http.StatusRequestEntityTooLarge, CodeTooLarge
	case errors.Is(err, blob.ErrRange):
		code, s.Code = http.StatusRequestedRangeNotSatisfiable, CodeRangeNotSatisfiable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code, s.Code = http.StatusServiceUnavailable, CodeNotReady
	}
	h.opts.Logger.Debug("blob request refused", "status", code, "code", s.Code, "message", s.Message)
	h.sendStatus(w, blobRoute, code, false, s)
}
