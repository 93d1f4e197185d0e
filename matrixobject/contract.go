package matrixobject

import (
	"context"
	"io"
)

// BlobStore is the part of a Store a storage engine needs: large values
// kept by content, and append blobs for shared log segments. It is written
// down here as the contract matrixobject keeps; a consumer declares its own
// copy of the methods it calls, as narrow as it needs.
//
// The guarantees behind it:
//   - PutBlob is durable on return, content and reference; equal content is
//     stored once. DecRef drops a reference (a delete);
//     unreferenced blobs go at the next SweepBlobs.
//   - Append and AppendAt are durable on return and atomic across a crash;
//     appends to one blob are serialized; AppendAt fails with
//     ErrOffsetMismatch unless the blob has the expected size.
//   - ReadAppendBlob and AppendBlobSize see only durable bytes, and always
//     a prefix of the blob.
type BlobStore interface {
	PutBlob(ctx context.Context, r io.Reader) (BlobRef, error)
	OpenBlob(ctx context.Context, sum string) (*BlobReader, error)
	DecRef(ctx context.Context, sum string) (int64, error)

	Append(ctx context.Context, bucket, key string, p []byte) (AppendResult, error)
	AppendAt(ctx context.Context, bucket, key string, offset int64, p []byte) (AppendResult, error)
	ReadAppendBlob(ctx context.Context, bucket, key string, off int64, p []byte) (int, error)
	AppendBlobSize(ctx context.Context, bucket, key string) (int64, error)
}

var _ BlobStore = (*Store)(nil)
