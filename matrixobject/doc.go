// Package matrixobject is an embedded object store: buckets of objects kept
// in a local directory, with an S3-compatible HTTP handler in front of them
// (package s3api).
//
// It is built for the large values, blobs and shared log segments of a
// storage engine, and for any program that wants durable objects without
// running a separate object server; the TemporalStore server serves one
// over S3.
//
// # What it offers
//
//   - Buckets ([Store.CreateBucket], [Store.DeleteBucket],
//     [Store.ListBuckets]) with S3's naming rules and optional quotas
//     ([Quota]: bytes and object count, [ErrQuotaExceeded]).
//   - Objects: [Store.PutObject] streamed from an io.Reader,
//     [Store.GetObject] with byte ranges, [Store.HeadObject],
//     [Store.DeleteObject], and [Store.ListObjects] with prefix, delimiter
//     (common prefixes), start-after and continuation tokens. Content type
//     and user metadata are stored in the same file as the bytes.
//   - Multipart uploads with S3's ETag rules, and [Store.SweepUploads] for
//     uploads left open longer than [Options.UploadExpiry].
//   - Append blobs ([Store.Append], [Store.AppendAt] with an expected
//     offset, [Store.ReadAppendBlob], [Store.AppendBlobSize]).
//   - Content-addressed blobs ([Store.PutBlob], [Store.OpenBlob]) with
//     durable reference counts and [Store.SweepBlobs] (dry run or real).
//
// [BlobStore] is the part of this a storage engine needs, as a contract.
//
// # Durability and atomicity
//
// Every write is durable when the call returns. An object (or part) is
// streamed to a temporary file while its MD5 (the ETag) and SHA-256 are
// computed; the metadata is appended to the same file as a checksummed
// trailer; the file is fsynced, renamed over the old version and the
// directory fsynced. A key therefore always holds either its old version or
// its new one, metadata included, never a mix. Open removes the temporary
// files of writes a crash interrupted. An append is written as one
// checksummed frame and fdatasynced before it is published to readers; a
// torn last frame is cut at Open. Reference counts are journaled and
// fdatasynced.
//
// # Concurrency
//
// A Store is safe for concurrent use. Writes to different keys run in
// parallel up to the commit, which renames and fsyncs the directory under a
// per-bucket lock; the last commit of a key wins. Reads never wait for
// writes: an [ObjectReader] keeps reading the version it opened even if it
// is replaced or deleted. Appends to one append blob are serialized, and a
// reader sees the blob's durable prefix. Nothing applies backpressure beyond
// the disk itself; each call does its own I/O on the caller's goroutine
// (large bodies are hashed on two helper goroutines while they are written,
// and bodies past 8 MiB are flushed by a third while the hashes finish).
//
// # Dependencies
//
// This module depends only on the standard library and golang.org/x/sys. It
// imports no other module of this repository.
package matrixobject
