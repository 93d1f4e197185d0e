package shard

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrImageDamaged is matched by CheckImage's error for a checkpoint that
// fails its checksum or does not parse: what Open skips for an older one.
var ErrImageDamaged = errImageDamaged

// CheckImage reads the checkpoint file at path and checks it as Open
// would, without a shard: its magic, format, trailing CRC32C, and that its
// index and collections decode and name each other. It returns the log
// index the image is applied to. A damaged image fails with an error
// matching ErrImageDamaged, one of another format with ErrImageFormat. The
// file is only read.
func CheckImage(path string) (applied uint64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("shard: check image: %w", err)
	}
	// decodeImage checks the image against a stamp: the image's own, as
	// nothing here knows which shard it belongs to. It refuses short
	// images and bad magic before the stamp is read.
	var stamp Stamp
	if len(b) >= imageHeader+4 {
		p := b[len(imageMagic):]
		stamp = Stamp{
			ShardID: binary.LittleEndian.Uint32(p[2:]),
			RangeLo: binary.LittleEndian.Uint32(p[6:]),
			RangeHi: binary.LittleEndian.Uint32(p[10:]),
		}
	}
	st, err := decodeImage(b, stamp)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	// The name says which index the image is applied to, and Open picks
	// the newest by it: a header that disagrees is damage too.
	if named, ok := imageNameApplied(filepath.Base(path)); ok && named != st.applied {
		return st.applied, fmt.Errorf("%s: %w: the image is applied to index %d", filepath.Base(path), errImageDamaged, st.applied)
	}
	return st.applied, nil
}

// imageNameApplied parses checkpoint-<applied>.img.
func imageNameApplied(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "checkpoint-")
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, ".img"); !ok {
		return 0, false
	}
	a, err := strconv.ParseUint(s, 10, 64)
	return a, err == nil
}
