package s3api

import "strings"

// Scope confines an access key to some buckets (Options.Scopes).
type Scope struct {
	// BucketPrefix is how the names of the buckets the key reaches start:
	// ListBuckets lists those alone, and every other operation on another
	// bucket is AccessDenied. Required.
	BucketPrefix string
	// ReadOnly limits the key to the operations that read: list, head,
	// get. Default: false.
	ReadOnly bool
}

// readOps are the operations a read-only scope allows.
var readOps = map[op]bool{
	opListBuckets: true, opHeadBucket: true, opGetBucketLocation: true, opListObjectsV1: true, opListObjectsV2: true,
	opListMultipartUploads: true, opGetObject: true, opHeadObject: true, opListParts: true,
}

// scope is the scope of the request's access key, false for an unscoped
// key or an anonymous request.
func (h *Handler) scope(req *request) (Scope, bool) {
	if req.auth == nil || req.auth.accessKey == "" {
		return Scope{}, false
	}
	s, ok := h.opts.Scopes[req.auth.accessKey]
	return s, ok
}

// authorize refuses a scoped key's request outside its scope.
func (h *Handler) authorize(req *request) *apiError {
	s, ok := h.scope(req)
	switch {
	case !ok:
		return nil
	case s.ReadOnly && !readOps[req.op]:
		return errAccessDenied("Access Denied: the access key is read-only")
	case req.op != opListBuckets && !strings.HasPrefix(req.bucket, s.BucketPrefix):
		return errAccessDenied("Access Denied: the access key reaches buckets named %s* only", s.BucketPrefix)
	}
	return nil
}

// visible says whether ListBuckets shows bucket to the request.
func (h *Handler) visible(req *request, bucket string) bool {
	s, ok := h.scope(req)
	return !ok || strings.HasPrefix(bucket, s.BucketPrefix)
}
