package ferricstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// A snapshot is a shard's whole state as of a log index, so that the log
// before it can go:
//
//	magic "FSNP" version(1 byte) index(uvarint) nstreams(uvarint) stream* flows
//	stream = key lastID maxDeletedID entriesAdded(uvarint)
//	         nentries(uvarint) (id nfields(uvarint) bytes*)*
//	         ngroups(uvarint) group*
//	group  = name lastID entriesRead(varint)
//	         nconsumers(uvarint) (name seen(varint) active(varint))*
//	         npending(uvarint) (id consumer deliveryTime(varint) count(uvarint))*
//	flows  = the flow table's snapshot as bytes (version 2 on; none in 1)
//	then CRC32C (4 bytes, little endian) of everything before it
//
// with bytes and names as uvarint length then bytes and IDs as two
// uvarints. It is written to a temporary file, fsynced, renamed and the
// directory fsynced; Open loads the newest one that checks out.
const (
	snapshotMagic   = "FSNP"
	snapshotVersion = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrSnapshot is a snapshot that does not check out.
var ErrSnapshot = errors.New("ferricstore: damaged snapshot")

// state is a shard's state: its streams and its flows.
type state struct {
	streams map[string]*stream.Stream
	flows   *flow.Table
}

// encodeSnapshot encodes st as of log index.
func encodeSnapshot(st state, index uint64) []byte {
	streams := st.streams
	b := append([]byte(snapshotMagic), snapshotVersion)
	b = binary.AppendUvarint(b, index)
	keys := make([]string, 0, len(streams))
	for k := range streams {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		s := streams[k]
		b = appendString(b, k)
		b = appendID(b, s.LastID)
		b = appendID(b, s.MaxDeletedID)
		b = binary.AppendUvarint(b, s.EntriesAdded)
		b = binary.AppendUvarint(b, uint64(s.Len()))
		s.Each(func(e stream.Entry) {
			b = appendID(b, e.ID)
			b = binary.AppendUvarint(b, uint64(len(e.Fields)))
			for _, f := range e.Fields {
				b = binary.AppendUvarint(b, uint64(len(f)))
				b = append(b, f...)
			}
		})
		gs := s.Groups()
		b = binary.AppendUvarint(b, uint64(len(gs)))
		for _, g := range gs {
			b = appendString(b, g.Name)
			b = appendID(b, g.LastID)
			b = binary.AppendVarint(b, g.EntriesRead)
			cs := g.Consumers()
			b = binary.AppendUvarint(b, uint64(len(cs)))
			for _, c := range cs {
				b = appendString(b, c.Name)
				b = binary.AppendVarint(b, c.SeenTime)
				b = binary.AppendVarint(b, c.ActiveTime)
			}
			b = binary.AppendUvarint(b, uint64(g.PendingCount()))
			g.PendingRange(nil, stream.ID{}, stream.MaxID, func(p *stream.Pending) bool {
				b = appendID(b, p.ID)
				b = appendString(b, p.Consumer.Name)
				b = binary.AppendVarint(b, p.DeliveryTime)
				b = binary.AppendUvarint(b, p.DeliveryCount)
				return true
			})
		}
	}
	b = appendBytes(b, st.flows.Snapshot())
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendBytes(dst, p []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p)))
	return append(dst, p...)
}

// decodeSnapshot reads a snapshot; its byte slices are copies.
func decodeSnapshot(data []byte) (state, uint64, error) {
	if len(data) < len(snapshotMagic)+1+4 || string(data[:4]) != snapshotMagic {
		return state{}, 0, ErrSnapshot
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return state{}, 0, ErrSnapshot
	}
	version := body[4]
	if version != 1 && version != snapshotVersion {
		return state{}, 0, fmt.Errorf("%w: version %d", ErrSnapshot, version)
	}
	d := decoder{b: body[5:]}
	index := d.uvarint()
	streams := map[string]*stream.Stream{}
	bad := func(what string) (state, uint64, error) {
		return state{}, 0, fmt.Errorf("%w: %s", ErrSnapshot, what)
	}
	for n := d.count(1); n > 0 && d.err == nil; n-- {
		key := string(d.bytes())
		s := stream.New()
		last, maxDel, added := d.id(), d.id(), d.uvarint()
		for m := d.count(3); m > 0 && d.err == nil; m-- {
			id := d.id()
			fields := make([][]byte, d.count(1))
			n := 0
			for i := range fields {
				fields[i] = d.bytes()
				n += len(fields[i])
			}
			// One allocation per entry, so that a trimmed stream does
			// not keep the whole snapshot alive.
			buf := make([]byte, 0, n)
			for i, f := range fields {
				buf = append(buf, f...)
				fields[i] = buf[len(buf)-len(f) : len(buf) : len(buf)]
			}
			if d.err == nil && s.Add(id, fields) != nil {
				return bad("entries out of order")
			}
		}
		s.LastID, s.MaxDeletedID, s.EntriesAdded = last, maxDel, added
		for m := d.count(3); m > 0 && d.err == nil; m-- {
			name, last, read := string(d.bytes()), d.id(), d.varint()
			if d.err != nil {
				break
			}
			g, err := s.CreateGroup(name, last, read)
			if err != nil {
				return bad("a group twice")
			}
			for c := d.count(3); c > 0 && d.err == nil; c-- {
				name, seen, active := string(d.bytes()), d.varint(), d.varint()
				if d.err == nil {
					g.RestoreConsumer(name, seen, active)
				}
			}
			for p := d.count(4); p > 0 && d.err == nil; p-- {
				id, holder, at, count := d.id(), string(d.bytes()), d.varint(), d.uvarint()
				if d.err == nil && !g.RestorePending(id, holder, at, count) {
					return bad("a pending entry of an unknown consumer")
				}
			}
		}
		streams[key] = s
	}
	flows := flow.NewTable()
	if version >= 2 {
		raw := d.bytes()
		if d.err == nil {
			t, err := flow.LoadSnapshot(raw)
			if err != nil {
				return bad(err.Error())
			}
			flows = t
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return bad("malformed")
	}
	return state{streams: streams, flows: flows}, index, nil
}

// snapshotName is the file of a snapshot at index.
func snapshotName(index uint64) string { return fmt.Sprintf("snapshot-%020d", index) }

// writeSnapshot writes data as dir's snapshot at index durably, and
// removes the older ones.
func writeSnapshot(dir string, index uint64, data []byte) error {
	name := filepath.Join(dir, snapshotName(index))
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	olds, _ := filepath.Glob(filepath.Join(dir, "snapshot-*"))
	for _, o := range olds {
		if o != name {
			os.Remove(o)
		}
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

// loadSnapshot returns dir's newest snapshot that checks out (none: an
// empty state at index 0). A damaged newer one is logged and skipped.
func loadSnapshot(dir string, warn func(name string, err error)) (state, uint64, error) {
	names, err := filepath.Glob(filepath.Join(dir, "snapshot-*"))
	if err != nil {
		return state{}, 0, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			os.Remove(n)
			continue
		}
		data, err := os.ReadFile(n)
		if err != nil {
			return state{}, 0, err
		}
		st, index, err := decodeSnapshot(data)
		if err != nil {
			warn(n, err)
			continue
		}
		return st, index, nil
	}
	return state{streams: map[string]*stream.Stream{}, flows: flow.NewTable()}, 0, nil
}
