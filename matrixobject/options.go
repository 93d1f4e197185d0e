package matrixobject

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Defaults applied by Open to zero-valued Options fields. The size limits
// are those of Amazon S3.
const (
	DefaultMaxPutSize    = 5 << 30  // 5 GiB
	DefaultMaxObjectSize = 5 << 40  // 5 TiB
	DefaultMaxPartSize   = 5 << 30  // 5 GiB
	DefaultMinPartSize   = 5 << 20  // 5 MiB
	DefaultMaxParts      = 10000    //
	DefaultMaxAppendSize = 64 << 20 // 64 MiB
	DefaultUploadExpiry  = 24 * time.Hour
)

// Options configures a Store. The zero value gives the defaults below.
type Options struct {
	// MaxPutSize is the largest object PutObject accepts. Default: 5 GiB.
	MaxPutSize int64
	// MaxObjectSize is the largest object CompleteMultipartUpload may
	// produce. Default: 5 TiB.
	MaxObjectSize int64
	// MaxPartSize is the largest part UploadPart accepts. Default: 5 GiB.
	MaxPartSize int64
	// MinPartSize is the smallest size of every part but the last in a
	// completed multipart upload. Default: 5 MiB.
	MinPartSize int64
	// MaxParts is the highest part number. Default: 10000.
	MaxParts int
	// MaxAppendSize is the largest single append to an append blob.
	// Default: 64 MiB.
	MaxAppendSize int
	// UploadExpiry is the age after which SweepUploads removes a multipart
	// upload that was neither completed nor aborted. Default: 24 hours.
	UploadExpiry time.Duration
	// Now is the clock used for modification times and upload ages.
	// Default: time.Now.
	Now func() time.Time
	// Logger receives recovery events. Default: discards them.
	Logger *slog.Logger
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.MaxPutSize == 0 {
		o.MaxPutSize = DefaultMaxPutSize
	}
	if o.MaxObjectSize == 0 {
		o.MaxObjectSize = DefaultMaxObjectSize
	}
	if o.MaxPartSize == 0 {
		o.MaxPartSize = DefaultMaxPartSize
	}
	if o.MinPartSize == 0 {
		o.MinPartSize = DefaultMinPartSize
	}
	if o.MaxParts == 0 {
		o.MaxParts = DefaultMaxParts
	}
	if o.MaxAppendSize == 0 {
		o.MaxAppendSize = DefaultMaxAppendSize
	}
	if o.UploadExpiry == 0 {
		o.UploadExpiry = DefaultUploadExpiry
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o Options) Validate() error {
	switch {
	case o.MaxPutSize < 0:
		return fmt.Errorf("%w: negative MaxPutSize", ErrInvalidOptions)
	case o.MaxObjectSize < 0:
		return fmt.Errorf("%w: negative MaxObjectSize", ErrInvalidOptions)
	case o.MaxPartSize < 0:
		return fmt.Errorf("%w: negative MaxPartSize", ErrInvalidOptions)
	case o.MinPartSize < 0 || o.MinPartSize > o.MaxPartSize:
		return fmt.Errorf("%w: MinPartSize %d out of range [0, MaxPartSize]", ErrInvalidOptions, o.MinPartSize)
	case o.MaxParts < 1 || o.MaxParts > 99999:
		return fmt.Errorf("%w: MaxParts %d out of range [1, 99999]", ErrInvalidOptions, o.MaxParts)
	case o.MaxAppendSize < 1 || o.MaxAppendSize > 1<<31-1:
		return fmt.Errorf("%w: MaxAppendSize %d out of range [1, 2^31-1]", ErrInvalidOptions, o.MaxAppendSize)
	case o.UploadExpiry < 0:
		return fmt.Errorf("%w: negative UploadExpiry", ErrInvalidOptions)
	}
	return nil
}
