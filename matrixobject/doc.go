// Package matrixobject is an embedded object store: buckets of objects kept
// in a local directory, with an S3-compatible HTTP handler in front of them.
//
// It holds the large values, blobs and (later) shared log segments of the
// TemporalStore engine, and it can be used on its own wherever a program
// wants durable objects without running a separate object server.
//
// # What this module owns
//
//   - Buckets and objects: put, get, head, delete and list, and range reads.
//   - Multipart uploads: begin, append and commit, with a content hash and an
//     fsync before the final rename, so a committed object is never torn.
//   - Append blobs, content-addressed storage for large values, and a sweep
//     that removes blobs nothing references any more.
//   - An S3-compatible HTTP handler (package s3api) with path-style buckets,
//     range GET and multipart uploads; it listens on 127.0.0.1:9000 by
//     default when served.
//
// The planned entry points are Open(dir) and s3api.Handler.
//
// # Dependencies
//
// This module depends only on the standard library and golang.org/x/sys. It
// imports no other module of this repository.
//
// The implementation has not landed yet; this package holds only its
// documentation.
package matrixobject
