package largelog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"lukechampine.com/blake3"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// Defaults.
const (
	// DefaultThreshold is the record size above which a record goes to a
	// file of its own.
	DefaultThreshold = 1 << 20
	// DefaultMaxRecord is the largest record: a 512 MiB value (the RESP
	// and HTTP surfaces' largest) with room for its command's header.
	DefaultMaxRecord = 512<<20 + 64<<10
)

// ErrCorrupt is returned by a read of a large record whose file is
// missing or does not hold the bytes its pointer names.
var ErrCorrupt = errors.New("largelog: large record missing or damaged")

// Options configure the large records.
type Options struct {
	// Threshold: records of more bytes that Own accepts go to files of
	// their own. Default: DefaultThreshold; it is lowered to what the
	// wrapped log takes.
	Threshold int
	// Own reports a record that may go to a file of its own once over
	// Threshold (the engine passes command.IsOne: a value alone, and not a
	// batch of small ones, whose reads would each read the file); any
	// record over the wrapped log's limit goes regardless. Default: every
	// record.
	Own func(rec []byte) bool
	// MaxRecord is the largest record an append takes. Default:
	// DefaultMaxRecord.
	MaxRecord int
	// RollBytes: once the large records appended to the log's segment
	// being written stand for this many bytes, the next record starts a
	// new segment (when the wrapped log can: a RollNext method), so that
	// the segment, sealed, can be compacted and reclaimed, and with it the
	// files of the values overwritten since. Default: DefaultRollBytes.
	RollBytes int64
	// Logger gets notices of files removed at open. Default:
	// slog.Default().
	Logger *slog.Logger
}

// DefaultRollBytes is Options.RollBytes' default: a segment of the disk
// log's default size.
const DefaultRollBytes = 64 << 20

// Wrap returns an OpenLog that opens the log open opens and keeps its large
// records beside it.
func Wrap(open storage.OpenLogFunc, o Options) storage.OpenLogFunc {
	return func(ctx context.Context, lo storage.LogOptions) (storage.Log, error) {
		inner, err := open(ctx, lo)
		if err != nil {
			return nil, err
		}
		l, err := newLog(inner, lo.Dir, o, !lo.Durable)
		if err != nil {
			inner.Close()
			return nil, err
		}
		_, files := inner.(storage.FileLog)
		_, recovers := inner.(storage.Recoverer)
		if files && recovers {
			return fileLog{l}, nil
		}
		return l, nil
	}
}

// Pointer records: a byte no command record starts with (their version
// is 1), a tag, the file's hash (its name), the record's size and the
// CRC32C of its head (storage.RecordHeadBytes), which OpenRecord checks. A
// read checks the file against the hash: BLAKE3, which hashes 64 MiB in
// 17 ms here against SHA-256's 66 (and CRC32C's 13, which the hash makes
// redundant). Logs written before BLAKE3 hold "LRG1" pointers, which name
// a SHA-256 and carry a CRC32C of the whole record that reads check.
const (
	pointerMark = 0xFF
	pointerTag  = "LRG2"
	pointerSize = 1 + len(pointerTag) + blake3Size + 8 + 4

	sha256Tag         = "LRG1"
	sha256PointerSize = 1 + len(sha256Tag) + sha256.Size + 8 + 4
)

const blake3Size = 32

// ref is what a pointer names.
type ref struct {
	sum  [32]byte
	size int64
	// crc is the CRC32C of the head, or for a SHA-256 pointer (whose
	// hash a read does not compute) of the whole record.
	crc    uint32
	sha256 bool
}

// headOf is the part of rec a pointer's CRC32C covers.
func headOf(rec []byte) []byte { return rec[:min(len(rec), storage.RecordHeadBytes)] }

// hashRecord is the hash a record's file is named by.
func hashRecord(rec []byte) [32]byte { return blake3.Sum256(rec) }

func pointer(sum [32]byte, rec []byte) []byte {
	b := make([]byte, 0, pointerSize)
	b = append(b, pointerMark)
	b = append(b, pointerTag...)
	b = append(b, sum[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(rec)))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(headOf(rec), castagnoli))
}

// parsePointer returns what a pointer record names.
func parsePointer(rec []byte) (ref, bool) {
	var r ref
	switch {
	case len(rec) == pointerSize && rec[0] == pointerMark && string(rec[1:5]) == pointerTag:
		r.crc = binary.LittleEndian.Uint32(rec[45:49])
	case len(rec) == sha256PointerSize && rec[0] == pointerMark && string(rec[1:5]) == sha256Tag:
		r.sha256, r.crc = true, binary.LittleEndian.Uint32(rec[45:49])
	default:
		return ref{}, false
	}
	copy(r.sum[:], rec[5:37])
	r.size = int64(binary.LittleEndian.Uint64(rec[37:45]))
	return r, true
}

// matches says b is the record r names.
func (r ref) matches(b []byte) bool {
	if int64(len(b)) != r.size {
		return false
	}
	if r.sha256 {
		return crc32.Checksum(b, castagnoli) == r.crc
	}
	return hashRecord(b) == r.sum
}

func fileName(sum [32]byte) string { return "large-" + hex.EncodeToString(sum[:]) + ".rec" }

// Log is the wrapped log. It is safe for concurrent use.
type Log struct {
	storage.Log
	dir  string
	opts Options
	// inline is the wrapped log's largest record.
	inline int

	mu      sync.Mutex
	journal *os.File
	// pending holds, per hash, the pointers being appended, by the token
	// notePending gave: the log's last index before each (its pointer
	// lands after it); at the indexes of the pointer records naming each
	// hash.
	pending map[[32]byte]map[uint64]uint64 // hash → token → after
	token   uint64
	at      map[[32]byte][]uint64
	// size is each named file's record size.
	size    map[[32]byte]int64
	entries int // in the journal, live or not
	// unrolled is the large bytes appended since the last RollNext.
	unrolled int64

	// deferred: the wrapped log syncs on an interval and calls syncFiles
	// before each sync (storage.SyncHook). A large file is then written
	// without an fsync of its own and its pending entry without a journal
	// fsync; syncFiles makes both durable before the log's records are.
	deferred bool
	// unsynced holds the files placed and not yet synced; dirty says an
	// entryUnsynced is durable in the journal and no syncFiles has found
	// nothing to sync since.
	unsynced []unsyncedFile
	dirty    bool
	// through is the index of the last entrySynced: every file a pointer
	// up to it names is durable.
	through uint64
	// syncing serializes syncFiles: the wrapped log's syncs may overlap
	// (an interval's and Close's), and one's note must not claim files
	// another is still syncing.
	syncing sync.Mutex
}

func newLog(inner storage.Log, dir string, o Options, interval bool) (*Log, error) {
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	o.Threshold = min(o.Threshold, inner.MaxRecordSize())
	if o.RollBytes <= 0 {
		o.RollBytes = DefaultRollBytes
	}
	if o.Own == nil {
		o.Own = func([]byte) bool { return true }
	}
	if o.MaxRecord <= 0 {
		o.MaxRecord = DefaultMaxRecord
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	l := &Log{Log: inner, dir: dir, opts: o, inline: inner.MaxRecordSize(), pending: map[[32]byte]map[uint64]uint64{}, at: map[[32]byte][]uint64{}, size: map[[32]byte]int64{}}
	if err := l.recover(); err != nil {
		return nil, err
	}
	if h, ok := inner.(storage.SyncHook); ok && interval {
		l.deferred = true
		h.SetBeforeSync(l.syncFiles)
	}
	return l, nil
}

// MaxRecordSize is Options.MaxRecord.
func (l *Log) MaxRecordSize() int { return l.opts.MaxRecord }

// Append implements storage.Log.
func (l *Log) Append(ctx context.Context, rec []byte) (uint64, error) {
	return l.append(ctx, [][]byte{rec}, func(ctx context.Context, recs [][]byte) (uint64, error) {
		return l.Log.Append(ctx, recs[0])
	})
}

// AppendBatch implements storage.Log.
func (l *Log) AppendBatch(ctx context.Context, recs [][]byte) (uint64, error) {
	return l.append(ctx, recs, l.Log.AppendBatch)
}

// AppendGroup implements storage.Log.
func (l *Log) AppendGroup(ctx context.Context, recs [][]byte) (uint64, error) {
	return l.append(ctx, recs, l.Log.AppendGroup)
}

// append writes recs' large records to their files and appends recs with
// pointers in their place through app.
func (l *Log) append(ctx context.Context, recs [][]byte, app func(context.Context, [][]byte) (uint64, error)) (uint64, error) {
	var large []int
	for i, r := range recs {
		if len(r) > l.opts.MaxRecord {
			return 0, fmt.Errorf("%w: %d bytes, at most %d", storage.ErrRecordTooLarge, len(r), l.opts.MaxRecord)
		}
		if len(r) > l.inline || (len(r) > l.opts.Threshold && l.opts.Own(r)) {
			large = append(large, i)
		}
	}
	if len(large) == 0 {
		return app(ctx, recs)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The files are written and synced while their hashes are computed,
	// under temporary names; noted pending next, and only then renamed:
	// from the note on, a file is kept whatever a release decides, even
	// one found already there.
	out := append([][]byte(nil), recs...)
	staged := make([]*stagedFile, len(large))
	for k, i := range large {
		staged[k] = l.stage(recs[i], !l.deferred)
	}
	sums, sizes := make([][32]byte, len(large)), make([]int64, len(large))
	for k, i := range large {
		sums[k], sizes[k] = hashRecord(recs[i]), int64(len(recs[i]))
	}
	var err error
	for _, st := range staged {
		err = errors.Join(err, st.wait())
	}
	if err != nil {
		discard(staged)
		return 0, err
	}
	token, after, err := l.notePending(sums)
	if err != nil {
		discard(staged)
		return 0, err
	}
	for k, i := range large {
		if err := l.place(sums[k], staged[k]); err != nil {
			discard(staged[k:])
			return 0, err
		}
		out[i] = pointer(sums[k], recs[i])
	}
	if l.deferred {
		l.mu.Lock()
		for _, s := range sums {
			l.unsynced = append(l.unsynced, unsyncedFile{path: filepath.Join(l.dir, fileName(s)), after: after})
		}
		l.mu.Unlock()
	} else if err := syncDir(l.dir); err != nil {
		return 0, err
	}
	first, err := app(ctx, out)
	if err != nil {
		// Left pending: a crash may still have kept the pointers, and
		// Open settles which did.
		return first, err
	}
	l.noteAppended(sums, sizes, large, token, first)
	return first, nil
}

// stagedFile is a large record being written to a temporary file and
// synced, beside the hashing of it.
type stagedFile struct {
	name string
	done chan struct{}
	err  error
}

// stage writes rec to a new temporary file, and with sync fsyncs it, in a
// goroutine of its own: the disk's work overlaps the hashing of the same
// bytes.
func (l *Log) stage(rec []byte, sync bool) *stagedFile {
	st := &stagedFile{done: make(chan struct{})}
	f, err := os.CreateTemp(l.dir, "large-*.tmp")
	if err != nil {
		st.err = err
		close(st.done)
		return st
	}
	st.name = f.Name()
	go func() {
		defer close(st.done)
		_, err := f.Write(rec)
		if err == nil && sync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		st.err = err
	}()
	return st
}

// wait returns once the file is written and synced.
func (st *stagedFile) wait() error {
	<-st.done
	return st.err
}

// discard removes staged files that were not placed.
func discard(staged []*stagedFile) {
	for _, st := range staged {
		if st.wait(); st.name != "" {
			os.Remove(st.name)
		}
	}
}

// place renames a staged file to the name of its hash sum; the caller
// syncs the directory. A file of that name and size is there already when
// the same record was written before (it was synced before its rename),
// and the staged one goes.
func (l *Log) place(sum [32]byte, st *stagedFile) error {
	path := filepath.Join(l.dir, fileName(sum))
	if fi, err := os.Stat(path); err == nil {
		if ti, err := os.Stat(st.name); err == nil && fi.Size() == ti.Size() {
			return os.Remove(st.name)
		}
	}
	return os.Rename(st.name, path)
}

// readFile reads the record a pointer names and checks it.
func (l *Log) readFile(r ref) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(l.dir, fileName(r.sum)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if !r.matches(b) {
		return nil, fmt.Errorf("%w: %s holds %d bytes that do not match its record", ErrCorrupt, fileName(r.sum), len(b))
	}
	return b, nil
}

// resolve returns rec, or the record a pointer rec names.
func (l *Log) resolve(rec []byte) ([]byte, error) {
	if r, ok := parsePointer(rec); ok {
		return l.readFile(r)
	}
	return rec, nil
}

// OpenRecord implements storage.RecordFiles for the records named by
// BLAKE3 pointers (a SHA-256 one is read whole: ok is false).
func (l *Log) OpenRecord(index uint64) (*storage.RecordFile, bool, error) {
	rec, err := l.Log.Read(index)
	if err != nil {
		return nil, false, err
	}
	r, ok := parsePointer(rec)
	if !ok || r.sha256 {
		return nil, false, nil
	}
	f, head, err := l.openHead(r)
	if err != nil {
		return nil, false, err
	}
	verify := func() error {
		h := blake3.New(blake3Size, nil)
		n, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, r.size+1), make([]byte, 1<<20))
		if err != nil || n != r.size || [32]byte(h.Sum(nil)) != r.sum {
			return fmt.Errorf("%w: %s holds %d bytes that do not match its record", ErrCorrupt, fileName(r.sum), n)
		}
		return nil
	}
	return &storage.RecordFile{File: f, Size: r.size, Head: head, Verify: verify}, true, nil
}

// ReadHead implements storage.RecordFiles.
func (l *Log) ReadHead(index uint64) ([]byte, int64, error) {
	rec, err := l.Log.Read(index)
	if err != nil {
		return nil, 0, err
	}
	r, ok := parsePointer(rec)
	switch {
	case !ok:
		return rec, int64(len(rec)), nil
	case r.sha256:
		b, err := l.readFile(r)
		return b, int64(len(b)), err
	}
	f, head, err := l.openHead(r)
	if err != nil {
		return nil, 0, err
	}
	f.Close()
	return head, r.size, nil
}

// openHead opens the file r names and reads its head, checked.
func (l *Log) openHead(r ref) (*os.File, []byte, error) {
	f, err := os.Open(filepath.Join(l.dir, fileName(r.sum)))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	head := make([]byte, min(r.size, storage.RecordHeadBytes))
	if _, err := f.ReadAt(head, 0); err != nil || crc32.Checksum(head, castagnoli) != r.crc {
		f.Close()
		return nil, nil, fmt.Errorf("%w: the head of %s does not match its record", ErrCorrupt, fileName(r.sum))
	}
	return f, head, nil
}

// Read implements storage.Log.
func (l *Log) Read(index uint64) ([]byte, error) {
	rec, err := l.Log.Read(index)
	if err != nil {
		return nil, err
	}
	return l.resolve(rec)
}

// Iterator implements storage.Log.
func (l *Log) Iterator(from uint64) storage.Iterator {
	return &iterator{Iterator: l.Log.Iterator(from), l: l}
}

type iterator struct {
	storage.Iterator
	l   *Log
	val []byte
	err error
}

func (it *iterator) Next() bool {
	if it.err != nil || !it.Iterator.Next() {
		return false
	}
	it.val, it.err = it.l.resolve(it.Iterator.Value())
	return it.err == nil
}

func (it *iterator) Value() []byte { return it.val }

func (it *iterator) Err() error {
	if it.err != nil {
		return it.err
	}
	return it.Iterator.Err()
}

// Segments implements storage.Log with each segment's bytes counting its
// large records whole, as the records read back: compaction weighs a
// segment's live values against them, and a segment of pointers to values
// long overwritten is then as much garbage as its values were.
func (l *Log) Segments() []storage.Segment {
	segs := l.Log.Segments()
	if len(segs) == 0 {
		return segs
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for sum, idx := range l.at {
		extra := l.size[sum] - int64(pointerSize)
		for _, i := range idx {
			// The last segment whose first index is at or below i.
			k := sort.Search(len(segs), func(k int) bool { return segs[k].First > i }) - 1
			if k >= 0 {
				segs[k].Bytes += extra
			}
		}
	}
	return segs
}

// Stats implements storage.Log, the large files' bytes counted on disk.
func (l *Log) Stats() storage.LogStats {
	st := l.Log.Stats()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.size {
		st.DiskBytes += n
	}
	return st
}

// TruncateFront implements storage.Log, removing the files no record
// names any more.
func (l *Log) TruncateFront(ctx context.Context, index uint64) error {
	if err := l.Log.TruncateFront(ctx, index); err != nil {
		return err
	}
	return l.release()
}

// release forgets the pointers before the first index and removes the
// files no pointer names.
func (l *Log) release() error {
	first := l.Log.FirstIndex()
	l.mu.Lock()
	defer l.mu.Unlock()
	var gone [][32]byte
	for sum, idx := range l.at {
		live := idx[:0]
		for _, i := range idx {
			if i >= first {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			delete(l.at, sum)
			delete(l.size, sum)
			if len(l.pending[sum]) == 0 {
				gone = append(gone, sum)
			}
			continue
		}
		l.at[sum] = live
	}
	for _, sum := range gone {
		if err := os.Remove(filepath.Join(l.dir, fileName(sum))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if len(gone) > 0 {
		if err := syncDir(l.dir); err != nil {
			return err
		}
	}
	if l.entries > 64 && l.entries > 4*l.liveLocked() {
		return l.rewriteLocked()
	}
	return nil
}

func (l *Log) liveLocked() int {
	n := 0
	for _, idx := range l.at {
		n += len(idx)
	}
	return n
}

// Close closes the journal and the wrapped log.
func (l *Log) Close() error {
	// The wrapped log first: its last sync runs syncFiles, which writes
	// to the journal.
	err := l.Log.Close()
	l.mu.Lock()
	if l.journal != nil {
		err = errors.Join(err, l.journal.Close())
		l.journal = nil
	}
	l.mu.Unlock()
	return err
}

// fileLog is a Log over a log that is a storage.FileLog and a
// storage.Recoverer, and so is both itself.
type fileLog struct{ *Log }

// Files implements storage.FileLog: the wrapped log's files and the large
// files its records up to last name.
func (f fileLog) Files(last uint64) ([]storage.File, error) {
	files, err := f.Log.Log.(storage.FileLog).Files(last)
	if err != nil {
		return nil, err
	}
	first := f.Log.Log.FirstIndex()
	f.mu.Lock()
	defer f.mu.Unlock()
	for sum, idx := range f.at {
		for _, i := range idx {
			if i >= first && i <= last {
				files = append(files, storage.File{Name: fileName(sum), Size: f.size[sum]})
				break
			}
		}
	}
	return files, nil
}

// Recover implements storage.Recoverer. The pointers of the cut appends
// were never noted as appended: they stay pending until the next open
// settles them. A pending pointer noted after an index now cut may land at
// or below it: its entry is lowered to last, durably, so that Open's scan
// starts low enough.
func (f fileLog) Recover(ctx context.Context, last uint64) error {
	if err := f.Log.Log.(storage.Recoverer).Recover(ctx, last); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lowered := false
	for _, tokens := range f.pending {
		for t, after := range tokens {
			if after > last {
				tokens[t], lowered = last, true
			}
		}
	}
	if !lowered {
		return nil
	}
	return f.rewriteLocked()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// The journal: entries of a hash, the index after which its pointer is
// appended (pending) or the pointer's own index (appended), each checked
// by a CRC32C.
//
//	crc32c(entry[4:]) u32 | hash [32] | kind u32 | index u64 | pad u32
//
// Kinds: 1 pending, 2 at, 3 unsynced after, 4 synced through (the last
// two with a zero hash).
const (
	journalName  = "large.journal"
	entrySize    = 52
	entryPending = 1
	entryAt      = 2
	// entryUnsynced (deferred logs): files named by pointers after index
	// may not be durable until an entrySynced follows.
	entryUnsynced = 3
	// entrySynced (deferred logs): the files of every pointer up to index
	// are durable.
	entrySynced = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeEntry(b []byte, sum [32]byte, kind uint32, index uint64) []byte {
	e := make([]byte, entrySize)
	copy(e[4:36], sum[:])
	binary.LittleEndian.PutUint32(e[36:40], kind)
	binary.LittleEndian.PutUint64(e[40:48], index)
	binary.LittleEndian.PutUint32(e[0:4], crc32.Checksum(e[4:], castagnoli))
	return append(b, e...)
}

// notePending journals, durably, that pointers to sums will be appended
// after the log's last index, and returns the token noteAppended takes.
//
// A deferred log syncs the journal only for the first large record after
// a syncFiles found nothing to sync, noting that files may be unsynced
// after the log's last index: open checks the pointers after the last
// entrySynced. Later entries are synced by syncFiles.
func (l *Log) notePending(sums [][32]byte) (token, after uint64, err error) {
	after = l.Log.LastIndex()
	var b []byte
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.deferred && !l.dirty
	if first {
		b = encodeEntry(b, [32]byte{}, entryUnsynced, after)
	}
	for _, s := range sums {
		b = encodeEntry(b, s, entryPending, after)
	}
	if l.journal == nil {
		if err := l.createJournalLocked(); err != nil {
			return 0, 0, err
		}
	}
	if _, err := l.journal.Write(b); err != nil {
		return 0, 0, err
	}
	if !l.deferred || first {
		if err := l.journal.Sync(); err != nil {
			return 0, 0, err
		}
	}
	if first {
		l.dirty = true
		l.entries++
	}
	l.token++
	for _, s := range sums {
		if l.pending[s] == nil {
			l.pending[s] = map[uint64]uint64{}
		}
		l.pending[s][l.token] = after
	}
	l.entries += len(sums)
	return l.token, after, nil
}

// createJournalLocked creates the journal for the log's first large
// record, durably.
func (l *Log) createJournalLocked() error {
	f, err := os.OpenFile(filepath.Join(l.dir, journalName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return err
	}
	l.journal, l.entries = f, 0
	return nil
}

// noteAppended records the pointers' indexes: recs[large[k]] went to
// first+large[k], noted pending under token. Not synced: a crash before
// the next sync is settled by Open's scan.
func (l *Log) noteAppended(sums [][32]byte, sizes []int64, large []int, token, first uint64) {
	var b []byte
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, s := range sums {
		i := first + uint64(large[k])
		b = encodeEntry(b, s, entryAt, i)
		l.at[s] = append(l.at[s], i)
		l.size[s] = sizes[k]
		if delete(l.pending[s], token); len(l.pending[s]) == 0 {
			delete(l.pending, s)
		}
	}
	l.entries += len(sums)
	for _, n := range sizes {
		l.unrolled += n
	}
	if r, ok := l.Log.(interface{ RollNext() }); ok && l.unrolled >= l.opts.RollBytes {
		r.RollNext()
		l.unrolled = 0
	}
	if _, err := l.journal.Write(b); err != nil {
		// The entries are in memory; Open's scan finds the pointers
		// the journal lacks.
		l.opts.Logger.Warn("large record journal write failed", "dir", l.dir, "err", err)
	}
}

// recover reads the journal, settles the pending pointers by scanning the
// log after them, removes the files no record names and the temporary
// files a crash left, and rewrites the journal.
func (l *Log) recover() error {
	path := filepath.Join(l.dir, journalName)
	data, err := os.ReadFile(path)
	first, last := l.Log.FirstIndex(), l.Log.LastIndex()
	scanFrom := uint64(0)
	switch {
	case os.IsNotExist(err):
		// A log restored from a backup holds the files and not the
		// journal: every pointer is found by a scan. A new log, or one
		// that never held a large record, has no file to keep, and is
		// not read at all.
		if has, err := hasLargeFiles(l.dir); err != nil {
			return err
		} else if has {
			scanFrom = first
		}
	case err != nil:
		return err
	}
	var unsynced, synced bool
	var unsyncedAfter uint64
	for len(data) >= entrySize {
		e := data[:entrySize]
		data = data[entrySize:]
		if crc32.Checksum(e[4:], castagnoli) != binary.LittleEndian.Uint32(e[0:4]) {
			break // a torn last entry: nothing after it was synced
		}
		var sum [32]byte
		copy(sum[:], e[4:36])
		index := binary.LittleEndian.Uint64(e[40:48])
		switch binary.LittleEndian.Uint32(e[36:40]) {
		case entryPending:
			if scanFrom == 0 || index+1 < scanFrom {
				scanFrom = index + 1
			}
		case entryAt:
			if index >= first && index <= last {
				l.at[sum] = appendOnce(l.at[sum], index)
			}
		case entryUnsynced:
			if !unsynced || index < unsyncedAfter {
				unsynced, unsyncedAfter = true, index
			}
		case entrySynced:
			synced, l.through = true, max(l.through, index)
		}
	}
	// Files written without their own fsync (a deferred log) may be
	// missing or short after a crash of the machine for pointers after the
	// last sync: they are looked for and checked, and the log is cut
	// before the first that fails (records the log's syncs never made
	// durable, so never promised).
	verifyFrom := uint64(0)
	if unsynced {
		verifyFrom = unsyncedAfter + 1
		if synced {
			verifyFrom = l.through + 1
		}
		verifyFrom = max(verifyFrom, first)
		if scanFrom == 0 || verifyFrom < scanFrom {
			scanFrom = verifyFrom
		}
	}
	if scanFrom != 0 {
		if err := l.scan(max(scanFrom, first)); err != nil {
			return err
		}
	}
	if verifyFrom != 0 {
		if err := l.verifyTail(verifyFrom); err != nil {
			return err
		}
	}
	if err := l.removeUnnamed(); err != nil {
		return err
	}
	for sum := range l.at {
		if _, ok := l.size[sum]; ok {
			continue
		}
		st, err := os.Stat(filepath.Join(l.dir, fileName(sum)))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		l.size[sum] = st.Size()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.at) == 0 {
		// Nothing to note: the journal, if any, goes, and is made
		// again by the first large record, so that a log without one
		// costs no file and no fsync at open.
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	return l.rewriteLocked()
}

// verifyTail checks the files of the pointers from index on and cuts the
// log before the first whose file is missing or damaged.
func (l *Log) verifyTail(from uint64) error {
	bad := uint64(0)
	it := l.Log.Iterator(from)
	for it.Next() {
		r, ok := parsePointer(it.Value())
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(l.dir, fileName(r.sum)))
		if err != nil || !r.matches(b) {
			bad = it.Index()
			break
		}
	}
	err := it.Err()
	it.Close()
	if err != nil || bad == 0 {
		return err
	}
	rc, ok := l.Log.(storage.Recoverer)
	if !ok {
		return fmt.Errorf("%w: the large record at %d was not synced and the log cannot be cut", ErrCorrupt, bad)
	}
	lost := l.Log.LastIndex() - (bad - 1)
	if err := rc.Recover(context.Background(), bad-1); err != nil {
		return err
	}
	last := l.Log.LastIndex()
	for sum, idx := range l.at {
		live := idx[:0]
		for _, i := range idx {
			if i <= last {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			delete(l.at, sum)
			delete(l.size, sum)
			continue
		}
		l.at[sum] = live
	}
	l.opts.Logger.Warn("cut the log before a large record whose file was not synced before a crash",
		"dir", l.dir, "index", bad, "records_cut", lost)
	return nil
}

// unsyncedFile is a file placed without an fsync, whose pointer lands
// after index after.
type unsyncedFile struct {
	path  string
	after uint64
}

// syncFiles runs before each sync of the wrapped log (storage.SyncHook).
// It makes durable, with the journal's entries, the files whose pointers
// may be at or below the log's last index X (those noted pending after an
// index below X), and notes that every pointer up to X names a durable
// file. A file noted later has its pointer past X, and waits for the next
// sync.
//
// A segment sealed at a roll is synced without it: pointers may then be
// on the disk before their files, but after the last X, where open looks
// for them (verifyTail).
func (l *Log) syncFiles() error {
	l.syncing.Lock()
	defer l.syncing.Unlock()
	l.mu.Lock()
	if !l.dirty {
		l.mu.Unlock()
		return nil
	}
	through := l.Log.LastIndex()
	var now, later []unsyncedFile
	for _, f := range l.unsynced {
		if f.after < through {
			now = append(now, f)
		} else {
			later = append(later, f)
		}
	}
	l.unsynced = later
	l.mu.Unlock()

	var err error
	for _, f := range now {
		if err = syncFile(f.path); err != nil {
			break
		}
	}
	if err == nil && len(now) > 0 {
		err = syncDir(l.dir)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		b := encodeEntry(nil, [32]byte{}, entrySynced, through)
		if _, err = l.journal.Write(b); err == nil {
			err = l.journal.Sync()
		}
	}
	if err != nil {
		l.unsynced = append(now, l.unsynced...)
		return err
	}
	l.entries++
	l.through = max(l.through, through)
	if len(l.unsynced) == 0 {
		l.dirty = false
	}
	return nil
}

// syncFile fsyncs the file at path; one gone meanwhile (released) needs
// none.
func syncFile(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// hasLargeFiles says dir holds a large record's file.
func hasLargeFiles(dir string) (bool, error) {
	m, err := filepath.Glob(filepath.Join(dir, "large-*.rec"))
	return len(m) > 0, err
}

func appendOnce(idx []uint64, i uint64) []uint64 {
	for _, j := range idx {
		if j == i {
			return idx
		}
	}
	return append(idx, i)
}

// scan finds the pointer records from index on.
func (l *Log) scan(from uint64) error {
	it := l.Log.Iterator(from)
	defer it.Close()
	for it.Next() {
		if r, ok := parsePointer(it.Value()); ok {
			l.at[r.sum] = appendOnce(l.at[r.sum], it.Index())
			l.size[r.sum] = r.size
		}
	}
	return it.Err()
}

// removeUnnamed removes the large files no record names and temporary
// files.
func (l *Log) removeUnnamed() error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	removed := false
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "large-") && strings.HasSuffix(name, ".tmp"):
		case strings.HasPrefix(name, "large-") && strings.HasSuffix(name, ".rec"):
			b, err := hex.DecodeString(strings.TrimSuffix(strings.TrimPrefix(name, "large-"), ".rec"))
			var sum [32]byte
			if err != nil || len(b) != len(sum) {
				continue
			}
			copy(sum[:], b)
			if len(l.at[sum]) > 0 {
				continue
			}
		default:
			continue
		}
		if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
			return err
		}
		l.opts.Logger.Info("removed a large record no log record names", "dir", l.dir, "file", name)
		removed = true
	}
	if removed {
		return syncDir(l.dir)
	}
	return nil
}

// rewriteLocked replaces the journal with the live pointers' entries.
func (l *Log) rewriteLocked() error {
	var b []byte
	n := 0
	for sum, idx := range l.at {
		for _, i := range idx {
			b = encodeEntry(b, sum, entryAt, i)
			n++
		}
	}
	for sum, tokens := range l.pending {
		for _, a := range tokens {
			b = encodeEntry(b, sum, entryPending, a)
			n++
		}
	}
	if l.through > 0 {
		b = encodeEntry(b, [32]byte{}, entrySynced, l.through)
		n++
	}
	if l.dirty {
		b = encodeEntry(b, [32]byte{}, entryUnsynced, l.through)
		n++
	}
	path := filepath.Join(l.dir, journalName)
	tmp := path + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if l.journal != nil {
		l.journal.Close()
	}
	l.journal, l.entries = f, n
	return nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
