// Package blob keeps the engine's named blobs: content of any size up to
// Options.MaxSize under a key in a namespace, written in one piece (Put)
// or as a multipart upload (Begin, Append parts in any order and as often
// as needed, Commit or Abort), read whole or by byte range (Open), listed
// per namespace (List), deleted, and swept (Sweep: uploads left past
// their expiry, and content no blob points at).
//
//	s, err := blob.Open(filepath.Join(dataDir, "blobs"), blob.Options{})
//	info, err := s.Put(ctx, "default", "models/ranker.bin", f, "")
//	r, err := s.Open(ctx, "default", "models/ranker.bin", &blob.Range{Start: 0, End: 1023})
//	defer r.Close()
//
// The bytes live in an object store of their own (package matrixobject, a
// bucket per namespace): a blob is written to a temporary file, hashed
// (SHA-256, and checked against the digest the caller gave, if any),
// fsynced and only then renamed into place, so after a crash a blob is
// either whole or absent, and an acknowledged one is there. A part is
// kept the same way until its upload is committed, aborted or expires.
// Readers see the version that was in place when they opened it, even if
// it is replaced or deleted meanwhile.
//
// Every method is safe for concurrent use and takes a context first.
// Errors wrap the sentinels below; match them with errors.Is.
package blob
