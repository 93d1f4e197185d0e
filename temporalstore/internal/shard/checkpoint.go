package shard

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
)

// A checkpoint is an image of the shard's index and collections at an
// applied log index, in a file checkpoint-<applied>.img:
//
//	magic "TSSHIMG\x00" | format uint16 | shard id uint32 | range lo, hi uint32
//	| applied uint64 | live bytes uint64 | lowest string address uint64
//	| index image length uint64 | index image
//	| object count uvarint | (slot uvarint, object image)... | CRC32C (uint32)
//
// all little endian, the CRC over every byte before it. String values are
// not in it: they stay in the log records the index points at, as do
// spilled collections. Resident collections are (package object's
// encoding), under the slots their index entries name.

const (
	imageMagic  = "TSSHIMG\x00"
	imageFormat = 2
	imageHeader = len(imageMagic) + 2 + 4 + 4 + 4 + 8 + 8 + 8 + 8
	// keepImages is how many checkpoints a shard keeps, so that a damaged
	// newest one leaves an older one to start from.
	keepImages = 2
)

// Errors of checkpoints.
var (
	// ErrImageFormat is returned by Open for a checkpoint of a format this
	// build does not read: it refuses to guess.
	ErrImageFormat = errors.New("shard: checkpoint of an unknown format")
	// ErrStamp is returned by Open when the shard's checkpoint was written
	// for another shard id or routing range.
	ErrStamp = errors.New("shard: checkpoint stamped for another shard or routing range")
	// errImageDamaged marks a checkpoint that fails its checksum or does not
	// parse; Open then starts from an older one, or from the whole log.
	errImageDamaged = errors.New("shard: damaged checkpoint")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Stamp identifies a shard's place: its id and routing range.
type Stamp struct {
	ShardID          uint32
	RangeLo, RangeHi uint32
}

// Checkpoint writes an image of the index as applied so far: to a
// temporary file, fsynced, renamed into place, the directory fsynced. It
// returns the applied index the image holds. Older images beyond the last
// keepImages are removed.
func (s *Shard) Checkpoint(ctx context.Context) (uint64, error) {
	return s.checkpoint(ctx, 0)
}

// checkpoint is Checkpoint, with the image's lowest string record at least
// floor. The counts bound the lowest record from below by up to a bucket,
// and Open refuses an image whose lowest record is below the log's first:
// a caller about to drop the log before floor, having made sure no string
// points there, passes it so that the image it writes stays usable.
func (s *Shard) checkpoint(ctx context.Context, floor uint64) (_ uint64, err error) {
	defer s.maintSafely("checkpoint", &err)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The image points at records that must outlive a crash: in async
	// mode they may not be synced yet.
	if err := s.log.Sync(ctx); err != nil {
		return 0, fmt.Errorf("shard: checkpoint: %w", err)
	}
	// The copies below are made while writers wait; their memory is taken
	// first, so that the allocation, and any work for the garbage
	// collector it brings, happens before.
	var nslots, nsnap int
	s.rlocked(func() { nslots, nsnap = s.index.Slots(), len(s.objs) })
	spare, snap := keyindex.NewSpare(nslots), make([]*object.Object, 0, nsnap+nsnap/8)
	var applied, low uint64
	var live int64
	var idx *keyindex.Index
	closed, snapping := false, false
	// Until the snapshot ends writers copy what they change: a panic
	// before must not leave them copying for good.
	defer func() {
		if snapping {
			s.snapActive.Add(-1)
		}
	}()
	s.rlocked(func() {
		if closed = s.closed; closed {
			return
		}
		// The log holds every record a string points at, so its first
		// index is a floor too, one that the bucketed bound may fall below.
		applied, live, low = s.applied, s.liveBytes, max(s.lowestStringLocked(), floor, s.log.FirstIndex())
		// The index and the slots of the collections are copied while
		// writers wait (memory copies) and encoded after they go on; until
		// then a writer copies a collection before it changes it
		// (writableLocked).
		idx = s.index.CloneWith(spare)
		snap = append(snap, s.objs...)
		s.snapEpoch.Add(1)
		s.snapActive.Add(1)
		snapping = true
		if s.maintFault != nil {
			s.maintFault("checkpoint")
		}
	})
	if closed {
		return 0, ErrClosed
	}
	if s.afterSnapshot != nil {
		s.afterSnapshot()
	}
	var objs []byte
	nobjs := 0
	for i, o := range snap {
		if o != nil {
			objs = binary.AppendUvarint(objs, uint64(i))
			objs = object.Append(objs, o)
			nobjs++
		}
	}
	snapping = false
	s.snapActive.Add(-1)
	imgLen := idx.ImageSize()
	buf := make([]byte, 0, imageHeader+imgLen+binary.MaxVarintLen64+len(objs)+4)
	buf = append(buf, imageMagic...)
	buf = binary.LittleEndian.AppendUint16(buf, imageFormat)
	buf = binary.LittleEndian.AppendUint32(buf, s.opts.Stamp.ShardID)
	buf = binary.LittleEndian.AppendUint32(buf, s.opts.Stamp.RangeLo)
	buf = binary.LittleEndian.AppendUint32(buf, s.opts.Stamp.RangeHi)
	buf = binary.LittleEndian.AppendUint64(buf, applied)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(live))
	buf = binary.LittleEndian.AppendUint64(buf, low)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(imgLen))
	buf = idx.AppendImage(buf) // in place: the image is most of the file
	buf = binary.AppendUvarint(buf, uint64(nobjs))
	buf = append(buf, objs...)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))

	if err := writeFileSync(imagePath(s.dir, applied), buf); err != nil {
		return 0, fmt.Errorf("shard: checkpoint: %w", err)
	}
	s.locked(func() { s.checkpointed = max(s.checkpointed, applied) })
	imgs, err := listImages(s.dir)
	if err == nil && len(imgs) > keepImages && s.backupHolds.Load() == 0 {
		for _, old := range imgs[:len(imgs)-keepImages] {
			_ = os.Remove(filepath.Join(s.dir, old.name))
		}
	}
	return applied, nil
}

// imagePath is the file of the image of a shard in dir applied to index
// applied.
func imagePath(dir string, applied uint64) string {
	return filepath.Join(dir, fmt.Sprintf("checkpoint-%020d.img", applied))
}

// writeFileSync writes b to name atomically and durably.
func writeFileSync(name string, b []byte) error {
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

type imageFile struct {
	name    string
	applied uint64
}

// listImages returns the shard's checkpoint files, oldest first.
func listImages(dir string) ([]imageFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []imageFile
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "checkpoint-") || !strings.HasSuffix(n, ".img") {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, "checkpoint-"), ".img"), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, imageFile{name: n, applied: a})
	}
	slices.SortFunc(out, func(a, b imageFile) int { return cmp.Compare(a.applied, b.applied) })
	return out, nil
}

// state is what a checkpoint holds.
type state struct {
	index   *keyindex.Index
	objs    []*object.Object
	applied uint64
	live    int64
	// lowest is the lowest log index a string entry points at
	// (math.MaxUint64 when none): the log must still hold it.
	lowest uint64
}

// lowestStringLocked bounds from below the lowest log index a string entry
// points at (math.MaxUint64 when there is none): by the counts of
// stringAddrs, or by a scan of the index should they ever be inconsistent.
func (s *Shard) lowestStringLocked() uint64 {
	if low, ok := s.strs.lowest(); ok {
		return low
	}
	return s.scanLowestStringLocked()
}

// scanLowestStringLocked is the lowest log index a string entry points at,
// math.MaxUint64 when there is none, by a scan of the index.
func (s *Shard) scanLowestStringLocked() uint64 {
	low := uint64(math.MaxUint64)
	for e := range s.index.All() {
		if !isObject(e) {
			low = min(low, e.Addr)
		}
	}
	return low
}

// decodeImage parses a checkpoint file's bytes.
func decodeImage(b []byte, want Stamp) (*state, error) {
	if len(b) < imageHeader+4 || string(b[:len(imageMagic)]) != imageMagic {
		return nil, fmt.Errorf("%w: not a checkpoint", errImageDamaged)
	}
	if crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errImageDamaged)
	}
	p := b[len(imageMagic):]
	if f := binary.LittleEndian.Uint16(p); f != imageFormat {
		return nil, fmt.Errorf("%w: format %d (this build reads %d)", ErrImageFormat, f, imageFormat)
	}
	got := Stamp{
		ShardID: binary.LittleEndian.Uint32(p[2:]),
		RangeLo: binary.LittleEndian.Uint32(p[6:]),
		RangeHi: binary.LittleEndian.Uint32(p[10:]),
	}
	if got != want {
		return nil, fmt.Errorf("%w: image has shard %d range %d..%d, asked for shard %d range %d..%d",
			ErrStamp, got.ShardID, got.RangeLo, got.RangeHi, want.ShardID, want.RangeLo, want.RangeHi)
	}
	applied := binary.LittleEndian.Uint64(p[14:])
	live := int64(binary.LittleEndian.Uint64(p[22:]))
	lowest := binary.LittleEndian.Uint64(p[30:])
	n := binary.LittleEndian.Uint64(p[38:])
	body := b[imageHeader : len(b)-4]
	if n > uint64(len(body)) {
		return nil, fmt.Errorf("%w: index image of %d bytes in %d", errImageDamaged, n, len(body))
	}
	x, err := keyindex.DecodeImage(body[:n])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errImageDamaged, err)
	}
	st := &state{index: x, applied: applied, live: live, lowest: lowest}
	if st.objs, err = decodeObjects(body[n:], x); err != nil {
		return nil, fmt.Errorf("%w: %w", errImageDamaged, err)
	}
	return st, nil
}

// decodeObjects reads a checkpoint's collections, each into its slot, and
// checks that they and the index's collection entries name each other.
func decodeObjects(b []byte, x *keyindex.Index) ([]*object.Object, error) {
	cnt, k := binary.Uvarint(b)
	if k <= 0 || cnt > uint64(len(b)) {
		return nil, errors.New("bad object count")
	}
	b = b[k:]
	var objs []*object.Object
	for range cnt {
		slot, k := binary.Uvarint(b)
		if k <= 0 || slot > cnt*4+1024 {
			return nil, fmt.Errorf("bad object slot")
		}
		o, rest, err := object.Decode(b[k:])
		if err != nil {
			return nil, err
		}
		for uint64(len(objs)) <= slot {
			objs = append(objs, nil)
		}
		if objs[slot] != nil {
			return nil, fmt.Errorf("object slot %d twice", slot)
		}
		objs[slot], b = o, rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the objects", len(b))
	}
	named := 0
	for e := range x.All() {
		if !isObject(e) {
			continue
		}
		if e.Addr >= uint64(len(objs)) || objs[e.Addr] == nil {
			return nil, fmt.Errorf("index names object slot %d, which is empty", e.Addr)
		}
		named++
	}
	if named != int(cnt) {
		return nil, fmt.Errorf("%d objects, %d named by the index", cnt, named)
	}
	return objs, nil
}

// loadImage returns the newest checkpoint that decodes, or nil when there
// is none (the whole log is then replayed). A damaged image is skipped for
// an older one; an image of an unknown format or another stamp fails the
// open.
func (s *Shard) loadImage() (*state, error) {
	imgs, err := listImages(s.dir)
	if err != nil {
		return nil, err
	}
	for i := len(imgs) - 1; i >= 0; i-- {
		b, err := os.ReadFile(filepath.Join(s.dir, imgs[i].name))
		if err != nil {
			return nil, err
		}
		st, err := decodeImage(b, s.opts.Stamp)
		switch {
		case err == nil:
			if st.applied != imgs[i].applied || st.applied > s.log.LastIndex() {
				continue // names or outruns the log: not trusted
			}
			if st.applied+1 < s.log.FirstIndex() || st.lowest < s.log.FirstIndex() {
				// Older than the log's reclaimed front: the records it
				// needs are gone.
				continue
			}
			return st, nil
		case errors.Is(err, errImageDamaged):
			s.damagedImages++
			continue
		default:
			return nil, err
		}
	}
	return nil, nil
}
