package s3api

import (
	"net/url"
	"strings"
)

// op is an S3 operation.
type op int

const (
	opUnknown op = iota
	opListBuckets
	opCreateBucket
	opDeleteBucket
	opHeadBucket
	opGetBucketLocation
	opListObjectsV1
	opListObjectsV2
	opListMultipartUploads
	opDeleteObjects
	opPutObject
	opGetObject
	opHeadObject
	opDeleteObject
	opCreateMultipartUpload
	opUploadPart
	opCompleteMultipartUpload
	opAbortMultipartUpload
	opListParts
	// opAppendObject is a PutObject with x-amz-write-offset-bytes; route
	// never returns it (it looks at no headers), ServeHTTP sets it.
	opAppendObject
)

var opNames = [...]string{
	opUnknown:                 "Unknown",
	opListBuckets:             "ListBuckets",
	opCreateBucket:            "CreateBucket",
	opDeleteBucket:            "DeleteBucket",
	opHeadBucket:              "HeadBucket",
	opGetBucketLocation:       "GetBucketLocation",
	opListObjectsV1:           "ListObjects",
	opListObjectsV2:           "ListObjectsV2",
	opListMultipartUploads:    "ListMultipartUploads",
	opDeleteObjects:           "DeleteObjects",
	opPutObject:               "PutObject",
	opGetObject:               "GetObject",
	opHeadObject:              "HeadObject",
	opDeleteObject:            "DeleteObject",
	opCreateMultipartUpload:   "CreateMultipartUpload",
	opUploadPart:              "UploadPart",
	opCompleteMultipartUpload: "CompleteMultipartUpload",
	opAbortMultipartUpload:    "AbortMultipartUpload",
	opListParts:               "ListParts",
	opAppendObject:            "AppendObject",
}

func (o op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "Unknown"
}

// route maps a path-style request to its operation, bucket and key. path is
// the decoded URL path. Requests this handler does not implement get
// NotImplemented; an unsupported method gets MethodNotAllowed.
func route(method, path string, q url.Values) (op, string, string, *apiError) {
	path = strings.TrimPrefix(path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	has := func(k string) bool { _, ok := q[k]; return ok }
	if bucket == "" {
		if method == "GET" {
			return opListBuckets, "", "", nil
		}
		return opUnknown, "", "", errMethodNotAllowed(method)
	}
	if key == "" {
		// Bucket sub-resources that this handler does not serve.
		for _, sub := range []string{"acl", "policy", "cors", "lifecycle", "versioning", "tagging", "website", "logging", "notification", "replication", "encryption", "object-lock", "versions", "ownershipControls", "publicAccessBlock", "accelerate", "requestPayment", "analytics", "inventory", "metrics", "intelligent-tiering"} {
			if has(sub) {
				return opUnknown, bucket, "", errNotImplemented("?" + sub)
			}
		}
		switch method {
		case "GET":
			switch {
			case has("location"):
				return opGetBucketLocation, bucket, "", nil
			case has("uploads"):
				return opListMultipartUploads, bucket, "", nil
			case q.Get("list-type") == "2":
				return opListObjectsV2, bucket, "", nil
			case has("list-type"):
				return opUnknown, bucket, "", errInvalidArgument("list-type must be 2")
			}
			return opListObjectsV1, bucket, "", nil
		case "PUT":
			return opCreateBucket, bucket, "", nil
		case "DELETE":
			return opDeleteBucket, bucket, "", nil
		case "HEAD":
			return opHeadBucket, bucket, "", nil
		case "POST":
			if has("delete") {
				return opDeleteObjects, bucket, "", nil
			}
			return opUnknown, bucket, "", errNotImplemented("POST on a bucket")
		}
		return opUnknown, bucket, "", errMethodNotAllowed(method)
	}
	for _, sub := range []string{"acl", "tagging", "retention", "legal-hold", "torrent", "restore", "select", "attributes", "versionId"} {
		if has(sub) {
			return opUnknown, bucket, key, errNotImplemented("?" + sub)
		}
	}
	switch method {
	case "GET":
		if has("uploadId") {
			return opListParts, bucket, key, nil
		}
		return opGetObject, bucket, key, nil
	case "HEAD":
		return opHeadObject, bucket, key, nil
	case "PUT":
		if has("partNumber") || has("uploadId") {
			if !has("partNumber") || !has("uploadId") {
				return opUnknown, bucket, key, errInvalidArgument("UploadPart needs both partNumber and uploadId")
			}
			return opUploadPart, bucket, key, nil
		}
		return opPutObject, bucket, key, nil
	case "POST":
		switch {
		case has("uploads"):
			return opCreateMultipartUpload, bucket, key, nil
		case has("uploadId"):
			return opCompleteMultipartUpload, bucket, key, nil
		}
		return opUnknown, bucket, key, errNotImplemented("POST on an object")
	case "DELETE":
		if has("uploadId") {
			return opAbortMultipartUpload, bucket, key, nil
		}
		return opDeleteObject, bucket, key, nil
	}
	return opUnknown, bucket, key, errMethodNotAllowed(method)
}
