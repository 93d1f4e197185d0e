package matrixraft

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Snapshot file format:
//
//	[0:8]   magic "MRAFTSN1"
//	[8:12]  metadata length m, little endian
//	[12:12+m] SnapshotMetadata (protobuf)
//	then    data length d (8 bytes, little endian) and the data
//	last 4  CRC32C of everything before it
const snapMagic = "MRAFTSN1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func snapName(index, term uint64) string { return fmt.Sprintf("%016x-%016x.snap", term, index) }

func parseSnapName(name string) (index, term uint64, ok bool) {
	if !strings.HasSuffix(name, ".snap") || len(name) != 16+1+16+5 {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(name, "%016x-%016x.snap", &term, &index); err != nil {
		return 0, 0, false
	}
	return index, term, true
}

// snapshotFileHead returns a snapshot file's bytes before its data.
func snapshotFileHead(s *pb.Snapshot) ([]byte, error) {
	meta, err := proto.Marshal(s.GetMetadata())
	if err != nil {
		return nil, fmt.Errorf("marshal snapshot metadata: %w", err)
	}
	b := make([]byte, 0, len(snapMagic)+4+len(meta)+8)
	b = append(b, snapMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	return binary.LittleEndian.AppendUint64(b, uint64(len(s.GetData()))), nil
}

func encodeSnapshotFile(s *pb.Snapshot) ([]byte, error) {
	head, err := snapshotFileHead(s)
	if err != nil {
		return nil, err
	}
	b := append(head, s.GetData()...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

func decodeSnapshotFile(b []byte) (*pb.Snapshot, error) {
	if len(b) < len(snapMagic)+4+8+4 || string(b[:len(snapMagic)]) != snapMagic {
		return nil, fmt.Errorf("%w: not a snapshot file", ErrCorrupt)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: snapshot checksum mismatch", ErrCorrupt)
	}
	p := body[len(snapMagic):]
	m := uint64(binary.LittleEndian.Uint32(p))
	p = p[4:]
	if m+8 > uint64(len(p)) {
		return nil, fmt.Errorf("%w: snapshot metadata overruns the file", ErrCorrupt)
	}
	meta := &pb.SnapshotMetadata{}
	if err := proto.Unmarshal(p[:m], meta); err != nil {
		return nil, fmt.Errorf("%w: snapshot metadata: %v", ErrCorrupt, err)
	}
	p = p[m:]
	d := binary.LittleEndian.Uint64(p)
	p = p[8:]
	if d != uint64(len(p)) {
		return nil, fmt.Errorf("%w: snapshot data length %d, %d bytes present", ErrCorrupt, d, len(p))
	}
	return &pb.Snapshot{Metadata: meta, Data: slices.Clone(p)}, nil
}

// snapWriteChunk is how much of a snapshot file is written before it is
// written back to the device.
const snapWriteChunk = 1 << 20

// writeSnapshotFile makes s durable in dir: it writes a temporary file,
// fsyncs it, renames it into place and fsyncs the directory.
func writeSnapshotFile(dir string, s *pb.Snapshot) error {
	head, err := snapshotFileHead(s)
	if err != nil {
		return err
	}
	// The file is encodeSnapshotFile's bytes, written in pieces: the data
	// can be tens of megabytes, not worth copying once more.
	sum := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, s.GetData())
	tail := binary.LittleEndian.AppendUint32(nil, sum)
	name := snapName(s.GetMetadata().GetIndex(), s.GetMetadata().GetTerm())
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create snapshot: %w", err)
	}
	// The data goes out in chunks, each written back to the device before
	// the next: the log shares the disk, and its fdatasyncs would
	// otherwise queue behind tens of megabytes of snapshot at the final
	// fsync (measured: a 26 MB file stalled a concurrent fdatasync ~50 ms
	// written whole, ~20-30 ms in 1 MiB chunks).
	var off int64
	write := func(b []byte) error {
		if _, err := f.Write(b); err != nil {
			return err
		}
		off += int64(len(b))
		return nil
	}
	err = write(head)
	for data := s.GetData(); err == nil && len(data) > 0; {
		n := min(len(data), snapWriteChunk)
		if err = write(data[:n]); err == nil {
			err = writeBack(f, off-int64(n), int64(n))
		}
		data = data[n:]
	}
	if err == nil {
		err = write(tail)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("write snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close snapshot: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename snapshot: %w", err)
	}
	return syncDir(dir)
}

func readSnapshotFile(dir string, index, term uint64) (*pb.Snapshot, error) {
	b, err := os.ReadFile(filepath.Join(dir, snapName(index, term)))
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("%w: index %d term %d", ErrNoSnapshot, index, term)
	}
	if err != nil {
		return nil, err
	}
	s, err := decodeSnapshotFile(b)
	if err != nil {
		return nil, err
	}
	if s.GetMetadata().GetIndex() != index || s.GetMetadata().GetTerm() != term {
		return nil, fmt.Errorf("%w: snapshot file names index %d term %d, holds %d/%d", ErrCorrupt, index, term, s.GetMetadata().GetIndex(), s.GetMetadata().GetTerm())
	}
	return s, nil
}

// removeOldSnapshots deletes snapshot files (and leftover temporaries)
// older than keepIndex.
func removeOldSnapshots(dir string, keepIndex uint64) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	removed := false
	for _, de := range des {
		name := de.Name()
		if strings.HasSuffix(name, ".tmp") {
			os.Remove(filepath.Join(dir, name))
			removed = true
			continue
		}
		if idx, _, ok := parseSnapName(name); ok && idx < keepIndex {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
			removed = true
		}
	}
	if removed {
		return syncDir(dir)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
