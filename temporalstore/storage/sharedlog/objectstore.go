package sharedlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// ObjectStore is a Store in a matrixobject bucket: segments are append
// blobs (each append fdatasynced before it returns, never torn), the front
// and the snapshot are objects. The bucket is created if missing.
type ObjectStore struct {
	s      *matrixobject.Store
	bucket string
}

var _ Store = (*ObjectStore)(nil)

// NewObjectStore returns the Store in s's bucket.
func NewObjectStore(ctx context.Context, s *matrixobject.Store, bucket string) (*ObjectStore, error) {
	if err := s.CreateBucket(ctx, bucket, matrixobject.Quota{}); err != nil && !errors.Is(err, matrixobject.ErrBucketExists) {
		return nil, fmt.Errorf("sharedlog: bucket %s: %w", bucket, err)
	}
	return &ObjectStore{s: s, bucket: bucket}, nil
}

func objectErr(err error) error {
	switch {
	case errors.Is(err, matrixobject.ErrNoSuchKey):
		return fmt.Errorf("%w: %w", ErrNotExist, err)
	case errors.Is(err, matrixobject.ErrOffsetMismatch):
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// AppendAt implements Store.
func (o *ObjectStore) AppendAt(ctx context.Context, name string, off int64, p []byte) error {
	_, err := o.s.AppendAt(ctx, o.bucket, name, off, p)
	return objectErr(err)
}

// ReadAt implements Store.
func (o *ObjectStore) ReadAt(ctx context.Context, name string, off int64, p []byte) (int, error) {
	n, err := o.s.ReadAppendBlob(ctx, o.bucket, name, off, p)
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, objectErr(err)
}

// Size implements Store.
func (o *ObjectStore) Size(ctx context.Context, name string) (int64, error) {
	n, err := o.s.AppendBlobSize(ctx, o.bucket, name)
	return n, objectErr(err)
}

// Put implements Store.
func (o *ObjectStore) Put(ctx context.Context, name string, p []byte) error {
	_, err := o.s.PutObject(ctx, o.bucket, name, bytes.NewReader(p), matrixobject.PutOptions{})
	return objectErr(err)
}

// Get implements Store.
func (o *ObjectStore) Get(ctx context.Context, name string) ([]byte, error) {
	r, err := o.s.GetObject(ctx, o.bucket, name, matrixobject.GetOptions{})
	if err != nil {
		return nil, objectErr(err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Delete implements Store: the append blob and the object of that name.
func (o *ObjectStore) Delete(ctx context.Context, name string) error {
	err1 := o.s.DeleteAppendBlob(ctx, o.bucket, name)
	err2 := o.s.DeleteObject(ctx, o.bucket, name)
	if err1 != nil && !errors.Is(err1, matrixobject.ErrNoSuchKey) {
		return err1
	}
	if err2 != nil && !errors.Is(err2, matrixobject.ErrNoSuchKey) {
		return err2
	}
	return nil
}

// Cut implements Store: an append blob never holds a torn append.
func (o *ObjectStore) Cut(context.Context, string, int64, int64) error {
	return fmt.Errorf("%w: matrixobject append blobs are never torn", ErrUnsupported)
}
