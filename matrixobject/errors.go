package matrixobject

import "errors"

// Sentinel errors. Match them with errors.Is; the errors a Store returns wrap
// them with the bucket, key or value that caused them.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("matrixobject: closed")
	// ErrLocked is returned by Open when another Store holds the directory.
	ErrLocked = errors.New("matrixobject: directory is locked by another store")
	// ErrInvalidOptions is wrapped by Options.Validate's errors.
	ErrInvalidOptions = errors.New("matrixobject: invalid options")
	// ErrInvalidBucketName is returned for a bucket name S3 would refuse.
	ErrInvalidBucketName = errors.New("matrixobject: invalid bucket name")
	// ErrInvalidKey is returned for an empty key, a key over 1024 bytes, a
	// key that is not UTF-8, holds a NUL byte, or has a "." or ".." segment.
	ErrInvalidKey = errors.New("matrixobject: invalid key")
	// ErrInvalidArgument is returned for any other malformed argument: a
	// bad continuation token, a part number out of range, a negative size.
	ErrInvalidArgument = errors.New("matrixobject: invalid argument")
	// ErrNoSuchBucket is returned when the bucket does not exist.
	ErrNoSuchBucket = errors.New("matrixobject: no such bucket")
	// ErrBucketExists is returned by CreateBucket for a bucket that exists.
	ErrBucketExists = errors.New("matrixobject: bucket already exists")
	// ErrBucketNotEmpty is returned by DeleteBucket while the bucket holds
	// objects or append blobs.
	ErrBucketNotEmpty = errors.New("matrixobject: bucket not empty")
	// ErrNoSuchKey is returned when the object or append blob does not exist.
	ErrNoSuchKey = errors.New("matrixobject: no such key")
	// ErrInvalidRange is returned by GetObject for a range that selects no
	// byte of the object.
	ErrInvalidRange = errors.New("matrixobject: range not satisfiable")
	// ErrQuotaExceeded is returned when a write would take a bucket over its
	// quota. Nothing is written; the previous version stays.
	ErrQuotaExceeded = errors.New("matrixobject: bucket quota exceeded")
	// ErrTooLarge is returned when a body, part, append or completed object
	// exceeds its size limit. Nothing is written.
	ErrTooLarge = errors.New("matrixobject: entity too large")
	// ErrTooSmall is returned by CompleteMultipartUpload when a part other
	// than the last is below Options.MinPartSize.
	ErrTooSmall = errors.New("matrixobject: entity too small")
	// ErrBadDigest is returned when the content does not match the digest
	// the caller gave (PutOptions.ExpectedSHA256 or ExpectedMD5). Nothing is
	// written.
	ErrBadDigest = errors.New("matrixobject: content does not match its digest")
	// ErrSHA256Mismatch is returned, together with ErrBadDigest, when the
	// content does not match PutOptions.ExpectedSHA256.
	ErrSHA256Mismatch = errors.New("matrixobject: content does not match its SHA-256")
	// ErrNoSuchUpload is returned for an unknown, completed or aborted
	// multipart upload.
	ErrNoSuchUpload = errors.New("matrixobject: no such upload")
	// ErrInvalidPart is returned by CompleteMultipartUpload for a part that
	// was not uploaded or whose ETag does not match.
	ErrInvalidPart = errors.New("matrixobject: invalid part")
	// ErrInvalidPartOrder is returned by CompleteMultipartUpload when the
	// part numbers are not strictly ascending.
	ErrInvalidPartOrder = errors.New("matrixobject: part numbers not in ascending order")
	// ErrOffsetMismatch is returned by AppendAt when the blob's size is not
	// the expected offset. Nothing is appended.
	ErrOffsetMismatch = errors.New("matrixobject: append offset does not match the blob size")
	// ErrNoSuchBlob is returned for a content hash with no stored blob.
	ErrNoSuchBlob = errors.New("matrixobject: no such blob")
	// ErrCorrupt is returned when a stored file fails its checks.
	ErrCorrupt = errors.New("matrixobject: corrupt file")
)
