package walbench

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

// The envelope of a log is what it stores around each payload: bytes written
// to its segment files per record, as a function of payload size. Each
// system writes the records one Append (one Save) at a time without fsync,
// and the bytes are the growth of the logical end of its segment data:
//   - ours: Stats().Bytes after minus before (no segment is cut: the records
//     fit in the first segment, so no header is counted);
//   - etcd: the end of the length-prefixed frames in its *.wal files after
//     minus before (its files are preallocated, so their size says nothing;
//     the frames are walked to the first zero length field).

// etcdEnvelope returns etcd's WAL bytes per record for payloads.
func etcdEnvelope(dir string, payloads [][]byte) (float64, error) {
	walDir := filepath.Join(dir, "wal")
	w, err := wal.Create(zap.NewNop(), walDir, nil)
	if err != nil {
		return 0, err
	}
	w.SetUnsafeNoFsync()
	before, err := etcdDataEnd(walDir)
	if err != nil {
		w.Close()
		return 0, err
	}
	term := uint64(1)
	for i, p := range payloads {
		idx := uint64(i + 1)
		if err := w.Save(&raftpb.HardState{}, []*raftpb.Entry{{Term: &term, Index: &idx, Data: p}}); err != nil {
			w.Close()
			return 0, err
		}
	}
	after, err := etcdDataEnd(walDir)
	if err := errors.Join(err, w.Close()); err != nil {
		return 0, err
	}
	return float64(after-before) / float64(len(payloads)), nil
}

// etcdDataEnd sums, over the *.wal files in dir, the offset where the frames
// end. An etcd frame is an 8-byte little-endian length field (low 56 bits:
// data length; if the top bit is set, bits 56-58 hold the padding) followed
// by the data and its padding to 8 bytes; the preallocated tail is zeros.
func etcdDataEnd(dir string) (int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".wal") {
			continue
		}
		n, err := frameEnd(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

func frameEnd(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var off int64
	var hdr [8]byte
	for {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil
			}
			return 0, err
		}
		lenField := binary.LittleEndian.Uint64(hdr[:])
		if lenField == 0 {
			return off, nil
		}
		n := int64(lenField & (1<<56 - 1))
		var pad int64
		if lenField>>63 == 1 {
			pad = int64((lenField >> 56) & 0x7)
		}
		off += 8 + n + pad
	}
}
