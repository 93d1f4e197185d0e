package blockfmt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Block is one cached value with its key and the metadata the persistent
// tiers keep beside it.
type Block struct {
	Key     Key
	Kind    Kind
	Hotness uint8
	// ExpiresAt is the expiry in unix nanoseconds; 0 means never.
	ExpiresAt int64
	Value     []byte
}

// NewBlock returns a block for key and value with the kind its namespace
// gives and the initial hotness of that kind, never expiring.
func NewBlock(key Key, value []byte) Block {
	kind := key.Kind()
	return Block{Key: key, Kind: kind, Hotness: InitialHotness(kind, len(value)), Value: value}
}

// Expired reports whether the block has an expiry at or before now (unix
// nanoseconds).
func (b Block) Expired(now int64) bool { return b.ExpiresAt != 0 && b.ExpiresAt <= now }

// Header is what [DecodeHeader] returns: everything about a block except
// its value.
type Header struct {
	Key       Key
	Kind      Kind
	Hotness   uint8
	ExpiresAt int64
	// ValueLen is the length of the value once decompressed.
	ValueLen int
	// StoredLen is the length of the value as stored.
	StoredLen int
	// Compressed reports whether the value is stored zstd-compressed.
	Compressed bool
}

// Expired reports whether the block has an expiry at or before now (unix
// nanoseconds).
func (h Header) Expired(now int64) bool { return h.ExpiresAt != 0 && h.ExpiresAt <= now }

// Compression selects how [Encode] may compress values.
type Compression uint8

const (
	// CompressionNone stores every value as it is. It is the default.
	CompressionNone Compression = iota
	// CompressionZstd stores a value zstd-compressed when it is at least
	// [Options.MinCompressBytes] long and compression makes it smaller.
	CompressionZstd
)

// String returns the compression's configuration name.
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// DefaultMinCompressBytes is [Options.MinCompressBytes] when left zero.
const DefaultMinCompressBytes = 512

// Options are the block options of the original's CacheBlockOptions.
type Options struct {
	// Compression selects value compression. Default [CompressionNone].
	Compression Compression
	// MinCompressBytes is the shortest value that is worth trying to
	// compress. Default (0) [DefaultMinCompressBytes]; must not be
	// negative.
	MinCompressBytes int
}

// Validate reports options that cannot be used, wrapping
// [ErrInvalidOptions].
func (o Options) Validate() error {
	if o.Compression > CompressionZstd {
		return fmt.Errorf("%w: unknown compression %d", ErrInvalidOptions, o.Compression)
	}
	if o.MinCompressBytes < 0 {
		return fmt.Errorf("%w: MinCompressBytes %d is negative", ErrInvalidOptions, o.MinCompressBytes)
	}
	return nil
}

func (o Options) minCompress() int {
	if o.MinCompressBytes == 0 {
		return DefaultMinCompressBytes
	}
	return o.MinCompressBytes
}

// Format limits.
const (
	// MaxValueLen is the longest value a block can hold.
	MaxValueLen = 256 << 20
	// MaxKeyFieldLen is the longest record key, namespace or selector a
	// block can hold.
	MaxKeyFieldLen = 1 << 20
	// HeaderLen is the length of the fixed block header.
	HeaderLen = 48
	// Version is the format version this package writes.
	Version = 1
)

const (
	magic            = "MCBK"
	flagZstd   uint8 = 1 << 0
	knownFlags       = flagZstd
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// The codecs are stateless for callers: EncodeAll and DecodeAll may be
// called concurrently, and the options never change.
var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(false), // the block CRC covers the frame
			zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // only for invalid options, which are constant
		}
		return enc
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(MaxValueLen),
			zstd.WithDecoderMaxWindow(MaxValueLen))
		if err != nil {
			panic(err)
		}
		return dec
	})
)

// Encode appends the encoding of b to dst and returns the extended slice.
// It fails with [ErrTooLarge] when the value is longer than [MaxValueLen]
// or a key field longer than [MaxKeyFieldLen], and with
// [ErrInvalidOptions] for options that fail [Options.Validate].
func Encode(dst []byte, b Block, opts Options) ([]byte, error) {
	if err := opts.Validate(); err != nil {
		return dst, err
	}
	if len(b.Value) > MaxValueLen {
		return dst, fmt.Errorf("%w: value of %d bytes (max %d)", ErrTooLarge, len(b.Value), MaxValueLen)
	}
	if len(b.Key.Record) > MaxKeyFieldLen || len(b.Key.Namespace) > MaxKeyFieldLen || len(b.Key.Selector) > MaxKeyFieldLen {
		return dst, fmt.Errorf("%w: key field longer than %d bytes", ErrTooLarge, MaxKeyFieldLen)
	}
	if b.Kind > maxKind {
		return dst, fmt.Errorf("%w: unknown kind %d", ErrInvalidOptions, b.Kind)
	}
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, Version, 0, byte(b.Kind), b.Hotness)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(b.ExpiresAt))
	dst = binary.LittleEndian.AppendUint64(dst, b.Key.Shard)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.Key.Record)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.Key.Namespace)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.Key.Selector)))
	dst = binary.LittleEndian.AppendUint32(dst, 0) // stored length, below
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.Value)))
	dst = append(dst, 0, 0, 0, 0) // CRC, below
	dst = append(dst, b.Key.Record...)
	dst = append(dst, b.Key.Namespace...)
	dst = append(dst, b.Key.Selector...)
	valStart := len(dst)
	flags := uint8(0)
	if opts.Compression == CompressionZstd && len(b.Value) >= opts.minCompress() {
		dst = zstdEncoder().EncodeAll(b.Value, dst)
		if len(dst)-valStart < len(b.Value) {
			flags |= flagZstd
		} else {
			dst = dst[:valStart]
		}
	}
	if flags&flagZstd == 0 {
		dst = append(dst, b.Value...)
	}
	h := dst[start:]
	h[5] = flags
	binary.LittleEndian.PutUint32(h[36:40], uint32(len(dst)-valStart))
	crc := crc32.Update(0, castagnoli, h[:44])
	crc = crc32.Update(crc, castagnoli, h[HeaderLen:])
	binary.LittleEndian.PutUint32(h[44:48], crc)
	return dst, nil
}

// parsed is a verified block: its header and where its parts lie in src.
type parsed struct {
	h      Header
	stored []byte
}

func parse(src []byte) (parsed, error) {
	if len(src) < HeaderLen || string(src[:4]) != magic {
		return parsed{}, ErrCorrupt
	}
	switch v := src[4]; {
	case v == 0:
		return parsed{}, ErrCorrupt
	case v > Version:
		return parsed{}, fmt.Errorf("%w: version %d (this reader knows %d)", ErrUnsupportedVersion, v, Version)
	}
	flags, kind := src[5], Kind(src[6])
	if flags&^knownFlags != 0 || kind > maxKind {
		return parsed{}, ErrCorrupt
	}
	recLen := uint64(binary.LittleEndian.Uint32(src[24:28]))
	nsLen := uint64(binary.LittleEndian.Uint32(src[28:32]))
	selLen := uint64(binary.LittleEndian.Uint32(src[32:36]))
	storedLen := uint64(binary.LittleEndian.Uint32(src[36:40]))
	rawLen := uint64(binary.LittleEndian.Uint32(src[40:44]))
	if HeaderLen+recLen+nsLen+selLen+storedLen != uint64(len(src)) {
		return parsed{}, ErrCorrupt
	}
	compressed := flags&flagZstd != 0
	if rawLen > MaxValueLen || (!compressed && rawLen != storedLen) || (compressed && rawLen <= storedLen) {
		return parsed{}, ErrCorrupt
	}
	crc := crc32.Update(0, castagnoli, src[:44])
	crc = crc32.Update(crc, castagnoli, src[HeaderLen:])
	if crc != binary.LittleEndian.Uint32(src[44:48]) {
		return parsed{}, ErrCorrupt
	}
	body := src[HeaderLen:]
	p := parsed{h: Header{
		Key: Key{
			Shard:     binary.LittleEndian.Uint64(src[16:24]),
			Record:    string(body[:recLen]),
			Namespace: string(body[recLen : recLen+nsLen]),
			Selector:  string(body[recLen+nsLen : recLen+nsLen+selLen]),
		},
		Kind:       kind,
		Hotness:    src[7],
		ExpiresAt:  int64(binary.LittleEndian.Uint64(src[8:16])),
		ValueLen:   int(rawLen),
		StoredLen:  int(storedLen),
		Compressed: compressed,
	}}
	p.stored = body[recLen+nsLen+selLen:]
	return p, nil
}

// DecodeHeader verifies a whole encoded block and returns everything but
// its value, without decompressing it. Errors are as for [Decode].
func DecodeHeader(src []byte) (Header, error) {
	p, err := parse(src)
	return p.h, err
}

// Decode verifies and decodes one encoded block, which must be all of src.
// It returns [ErrCorrupt] for a truncated, extended or damaged block and
// [ErrUnsupportedVersion] for a block of a newer format. The returned
// block does not alias src.
func Decode(src []byte) (Block, error) {
	p, err := parse(src)
	if err != nil {
		return Block{}, err
	}
	b := Block{Key: p.h.Key, Kind: p.h.Kind, Hotness: p.h.Hotness, ExpiresAt: p.h.ExpiresAt}
	if !p.h.Compressed {
		if len(p.stored) == 0 {
			return b, nil // an empty value decodes as nil
		}
		b.Value = make([]byte, len(p.stored))
		copy(b.Value, p.stored)
		return b, nil
	}
	// A frame that declares its content size must declare the header's
	// length (the encoder leaves it out only for tiny values); either way
	// the decoder's memory limit bounds what it may produce.
	var zh zstd.Header
	if err := zh.Decode(p.stored); err != nil || zh.Skippable || (zh.HasFCS && zh.FrameContentSize != uint64(p.h.ValueLen)) {
		return Block{}, ErrCorrupt
	}
	// Grow towards the declared length rather than trusting it up front.
	out := make([]byte, 0, min(p.h.ValueLen, max(4*len(p.stored), 64<<10)))
	out, err = zstdDecoder().DecodeAll(p.stored, out)
	if err != nil || len(out) != p.h.ValueLen {
		return Block{}, ErrCorrupt
	}
	b.Value = out
	return b, nil
}
