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
// ListMultipartUploads. Anything else is answered NotImplemented, never with
// a fake success. Virtual-hosted-style addressing, versioning, ACLs and
// policies, tagging, CopyObject, conditional requests and server-side
// encryption are not supported.
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
// that fails any check is not stored.
//
// Errors are S3's XML error documents with S3's codes and statuses
// (NoSuchBucket 404, NoSuchKey 404, BucketNotEmpty 409,
// BucketAlreadyOwnedByYou 409, SignatureDoesNotMatch 403, InvalidAccessKeyId
// 403, InvalidRange 416, InvalidPart and InvalidPartOrder 400, NoSuchUpload
// 404, EntityTooLarge and EntityTooSmall 400, QuotaExceeded 403, ...).
//
// # Concurrency
//
// A Handler is safe for concurrent use; each request runs on its server
// goroutine and does its I/O there, streaming bodies to and from the store
// without buffering them whole.
package s3api
