// Package s3api serves a matrixobject.Store over the Amazon S3 REST API,
// path-style (http://host:port/bucket/key), so that S3 clients and SDKs can
// use it unchanged. A server of it listens on 127.0.0.1:9000 by default
// (DefaultAddr).
//
// # Operations
//
// ListBuckets, CreateBucket, DeleteBucket, HeadBucket, GetBucketLocation;
// PutObject, GetObject (with a Range header: 206 and Content-Range, 416 when
// unsatisfiable), HeadObject, DeleteObject, DeleteObjects; ListObjects and
// ListObjectsV2 (prefix, delimiter and common prefixes, continuation-token,
// start-after, marker, max-keys, encoding-type=url); CreateMultipartUpload,
// UploadPart, CompleteMultipartUpload, AbortMultipartUpload, ListParts,
// ListMultipartUploads; appends (below). Anything else is answered
// NotImplemented, never with a fake success. Virtual-hosted-style
// addressing, versioning, ACLs and policies, tagging, CopyObject,
// conditional requests and server-side encryption are not supported.
//
// # Appends
//
// PutObject with x-amz-write-offset-bytes: N appends, as S3 Express One
// Zone does: the body goes to the key's append blob (matrixobject's
// AppendAt) if the blob is N bytes long, N=0 creating it; the answer is 200
// with x-amz-object-size (the size after the append) and an ETag of the
// blob. An offset that is not the blob's size is refused with 400
// InvalidWriteOffset and appends nothing, so writers that share a blob see
// who got there first. A malformed offset is 400 InvalidArgument; an empty
// body, x-amz-meta-* headers (append blobs keep no metadata) and a key that
// holds a regular object are 400 InvalidRequest. The body is checked as
// any PutObject's and held in memory (up to the store's MaxAppendSize,
// EntityTooLarge past it) before it is appended.
//
// GetObject and HeadObject of a key that holds no object but an append
// blob serve the blob (binary/octet-stream, ranges as for objects); when a
// key holds both (a plain PutObject leaves the blob in place), the object
// wins. DeleteObject and DeleteObjects remove
// the key's append blob with its object. ListObjects does not list append
// blobs.
//
// # Authentication
//
// Requests are authenticated with AWS Signature Version 4 against
// Options.Credentials, in the Authorization header or as a presigned URL;
// signatures are compared in constant time. The payload is checked as
// x-amz-content-sha256 says: a hex SHA-256 is verified before the object is
// committed; UNSIGNED-PAYLOAD is taken as is; aws-chunked bodies
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD, its -TRAILER variant, and
// STREAMING-UNSIGNED-PAYLOAD-TRAILER) are decoded with every chunk and
// trailer signature checked. An x-amz-checksum-* header or trailer (CRC32,
// CRC32C, CRC64NVME, SHA-1, SHA-256) and Content-MD5 are verified too. A body
// that fails any check is not stored. An access key with a Scope
// (Options.Scopes) reaches only the buckets whose names start with its
// prefix (ListBuckets lists those; other requests are AccessDenied), and
// with ReadOnly only lists, heads and gets.
//
// Errors are S3's XML error documents with S3's codes and statuses
// (NoSuchBucket 404, NoSuchKey 404, BucketNotEmpty 409,
// BucketAlreadyOwnedByYou 409, SignatureDoesNotMatch 403, InvalidAccessKeyId
// 403, InvalidRange 416, InvalidPart and InvalidPartOrder 400, NoSuchUpload
// 404, EntityTooLarge and EntityTooSmall 400, InvalidWriteOffset 400,
// QuotaExceeded 403, ...).
//
// # Concurrency
//
// A Handler is safe for concurrent use; each request runs on its server
// goroutine and does its I/O there, streaming bodies to and from the store
// without buffering them whole.
package s3api
