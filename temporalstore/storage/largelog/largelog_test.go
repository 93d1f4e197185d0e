package largelog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/storagetest"
)

// The Log contract, its records in the log (its segment tests count on
// their bytes there); the large ones' own tests follow.
func TestLogContract(t *testing.T) {
	storagetest.Log(t, Wrap(disk.OpenLog, Options{Threshold: 30_000, MaxRecord: 4 << 20}))
}

// The contract again over a log synced on an interval, whose large files
// are synced by the log's syncs rather than each by its append.
func TestLogContractInterval(t *testing.T) {
	storagetest.Log(t, interval(Wrap(disk.OpenLog, Options{Threshold: 30_000, MaxRecord: 4 << 20}), 5*time.Millisecond))
}

// interval opens logs synced every d rather than at each append.
func interval(open storage.OpenLogFunc, d time.Duration) storage.OpenLogFunc {
	return func(ctx context.Context, lo storage.LogOptions) (storage.Log, error) {
		lo.Durable, lo.SyncInterval = false, d
		return open(ctx, lo)
	}
}

var testOptions = Options{Threshold: 1000, MaxRecord: 8 << 20}

func openAt(t *testing.T, dir string) storage.Log {
	t.Helper()
	l, err := Wrap(disk.OpenLog, testOptions)(t.Context(), storage.LogOptions{Dir: dir, Durable: true, SegmentBytes: 64 << 10})
	require.NoError(t, err)
	return l
}

func noise(seed, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func largeFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "large-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestLargeRecordsRoundTripAndReopen(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	ctx := t.Context()
	big, small, huge := noise(1, 5000), []byte("small"), noise(2, 6<<20)
	i, err := l.AppendBatch(ctx, [][]byte{big, small, huge, big})
	require.NoError(t, err)
	for k, want := range [][]byte{big, small, huge, big} {
		got, err := l.Read(i + uint64(k))
		require.NoError(t, err)
		require.Equal(t, want, got, k)
	}
	require.Len(t, largeFiles(t, dir), 2, "a file per distinct large record")
	_, err = l.Append(ctx, noise(3, 8<<20+1))
	require.ErrorIs(t, err, storage.ErrRecordTooLarge)

	files, err := l.(storage.FileLog).Files(l.LastIndex())
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	require.Subset(t, names, largeFiles(t, dir), "a backup copies the large files")
	require.NoError(t, l.Close())

	l = openAt(t, dir)
	defer l.Close()
	it := l.Iterator(i)
	var got [][]byte
	for it.Next() {
		got = append(got, bytes.Clone(it.Value()))
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.Equal(t, [][]byte{big, small, huge, big}, got)
}

// A file goes once no record in the log names it.
func TestTruncateReleasesFiles(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	defer l.Close()
	ctx := t.Context()
	old, kept := noise(1, 70<<10), noise(2, 70<<10)
	_, err := l.Append(ctx, old)
	require.NoError(t, err)
	// Fill segments past the first.
	for k := range 100 {
		_, err := l.Append(ctx, noise(100+k, 900))
		require.NoError(t, err)
	}
	i, err := l.Append(ctx, kept)
	require.NoError(t, err)
	require.Len(t, largeFiles(t, dir), 2)
	require.NoError(t, l.TruncateFront(ctx, i))
	require.Greater(t, l.FirstIndex(), uint64(1))
	require.Len(t, largeFiles(t, dir), 1)
	got, err := l.Read(i)
	require.NoError(t, err)
	require.Equal(t, kept, got)
}

// What a crash leaves between a large file and its pointer: a file whose
// pointer never reached the log goes at the next open; one whose pointer
// did stays, even when the journal never noted its index.
func TestOpenSettlesWhatACrashLeft(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir).(fileLog).Log
	ctx := t.Context()
	appended, lost := noise(1, 5000), noise(2, 5000)
	// appended: pending noted, written, appended; its index never noted.
	sums := [][32]byte{sha(appended)}
	_, _, err := l.notePending(sums)
	require.NoError(t, err)
	require.NoError(t, l.writeFile(sums[0], appended))
	i, err := l.Log.Append(ctx, pointer(sums[0], appended))
	require.NoError(t, err)
	// lost: pending noted and written, never appended.
	lostSums := [][32]byte{sha(lost)}
	_, _, err = l.notePending(lostSums)
	require.NoError(t, err)
	require.NoError(t, l.writeFile(lostSums[0], lost))
	// A temporary file of a write cut short.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "large-123.tmp"), []byte("cut"), 0o644))
	require.NoError(t, l.Close())

	l2 := openAt(t, dir)
	defer l2.Close()
	require.Equal(t, []string{fileName(sums[0])}, largeFiles(t, dir))
	got, err := l2.Read(i)
	require.NoError(t, err)
	require.Equal(t, appended, got)
}

// A log restored from a backup has its files and no journal: every
// pointer is found again.
func TestOpenWithoutJournal(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	v := noise(1, 5000)
	i, err := l.Append(t.Context(), v)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, journalName)))
	l = openAt(t, dir)
	defer l.Close()
	got, err := l.Read(i)
	require.NoError(t, err)
	require.Equal(t, v, got)
}

func TestDamagedFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	defer l.Close()
	v := noise(1, 5000)
	i, err := l.Append(t.Context(), v)
	require.NoError(t, err)
	path := filepath.Join(dir, fileName(sha(v)))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[100] ^= 1
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = l.Read(i)
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoError(t, os.Remove(path))
	_, err = l.Read(i)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestConcurrentAppendsOfTheSameContent(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	ctx := context.Background()
	v := noise(1, 3000)
	done := make(chan uint64, 8)
	for range 8 {
		go func() {
			i, err := l.Append(ctx, v)
			if err != nil {
				i = 0
			}
			done <- i
		}()
	}
	var idx []uint64
	for range 8 {
		i := <-done
		require.NotZero(t, i)
		idx = append(idx, i)
	}
	require.NoError(t, l.Close())
	l = openAt(t, dir)
	defer l.Close()
	for _, i := range idx {
		got, err := l.Read(i)
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}

func sha(b []byte) [32]byte { return hashRecord(b) }

// With Own, a record it refuses stays in the log up to the log's limit,
// and goes to a file only past it.
func TestOwnKeepsBatchesInTheLog(t *testing.T) {
	dir := t.TempDir()
	o := testOptions
	o.Own = func(rec []byte) bool { return rec[0] == 'v' }
	o.MaxRecord = 64 << 20
	l, err := Wrap(disk.OpenLog, o)(t.Context(), storage.LogOptions{Dir: dir, Durable: true})
	require.NoError(t, err)
	defer l.Close()
	value := append([]byte("v"), noise(1, 5000)...)
	batch := append([]byte("b"), noise(2, 5000)...)
	huge := append([]byte("b"), noise(3, l.(fileLog).inline+1)...)
	i, err := l.AppendBatch(t.Context(), [][]byte{value, batch, huge})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{fileName(sha(value)), fileName(sha(huge))}, largeFiles(t, dir))
	for k, want := range [][]byte{value, batch, huge} {
		got, err := l.Read(i + uint64(k))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// Large records standing for RollBytes seal their segment, which then
// goes, with the files of values no longer named, when the log is
// truncated past it.
func TestRollSealsSegmentsOfLargeRecords(t *testing.T) {
	dir := t.TempDir()
	o := testOptions
	o.RollBytes = 20_000
	l, err := Wrap(disk.OpenLog, o)(t.Context(), storage.LogOptions{Dir: dir, Durable: true})
	require.NoError(t, err)
	defer l.Close()
	ctx := t.Context()
	first, err := l.Append(ctx, noise(1, 25_000))
	require.NoError(t, err)
	next, err := l.Append(ctx, noise(2, 5000))
	require.NoError(t, err)
	segs := l.Segments()
	require.Len(t, segs, 2, "the first record's bytes rolled the segment")
	require.Equal(t, next, segs[1].First)
	require.NoError(t, l.TruncateFront(ctx, next))
	require.Greater(t, l.FirstIndex(), first)
	require.Equal(t, []string{fileName(sha(noise(2, 5000)))}, largeFiles(t, dir))
}

// A Recover that cuts below a pending pointer's noted index lowers it, so
// that the pointer, appended after the cut, is found by the next open.
func TestRecoverLowersPending(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir).(fileLog)
	ctx := t.Context()
	for k := range 5 {
		_, err := l.Append(ctx, []byte{byte(k)})
		require.NoError(t, err)
	}
	v := noise(1, 5000)
	sums := [][32]byte{sha(v)}
	_, _, err := l.notePending(sums)
	require.NoError(t, err)
	require.NoError(t, l.writeFile(sums[0], v))
	require.NoError(t, l.Recover(ctx, 3))
	i, err := l.Log.Log.Append(ctx, pointer(sums[0], v))
	require.NoError(t, err)
	require.Equal(t, uint64(4), i, "the pointer lands below the index noted before the cut")
	require.NoError(t, l.Close())

	l2 := openAt(t, dir)
	defer l2.Close()
	got, err := l2.Read(i)
	require.NoError(t, err)
	require.Equal(t, v, got)
}

// The group limit is the wrapped log's: a caller that fills groups up to
// it (a transaction's records) never has one refused.
func TestGroupLimitIsTheLogs(t *testing.T) {
	l := openAt(t, t.TempDir())
	defer l.Close()
	limit := l.MaxGroupSize()
	var group [][]byte
	var bytes int64
	for {
		rec := noise(len(group), 900) // under Threshold: kept in the log
		if bytes+int64(len(rec))+storage.FrameOverhead > limit {
			break
		}
		group = append(group, rec)
		bytes += int64(len(rec)) + storage.FrameOverhead
	}
	_, err := l.AppendGroup(t.Context(), group)
	require.NoError(t, err, "a group within MaxGroupSize")
}

// A log that never held a large record has no journal: opening it writes
// nothing. The first large record makes one.
func TestNoJournalUntilALargeRecord(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	_, err := l.Append(t.Context(), []byte("small"))
	require.NoError(t, err)
	require.NoFileExists(t, filepath.Join(dir, journalName))
	require.NoError(t, l.Close())
	l = openAt(t, dir)
	defer l.Close()
	require.NoFileExists(t, filepath.Join(dir, journalName))
	i, err := l.Append(t.Context(), noise(1, 5000))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, journalName))
	got, err := l.Read(i)
	require.NoError(t, err)
	require.Equal(t, noise(1, 5000), got)
}

// writeFile stores rec, of hash sum, as a large file, durably, as append
// does for one record, for the tests that stage a crash's leftovers.
func (l *Log) writeFile(sum [32]byte, rec []byte) error {
	st := l.stage(rec, true)
	if err := st.wait(); err != nil {
		discard([]*stagedFile{st})
		return err
	}
	if err := l.place(sum, st); err != nil {
		discard([]*stagedFile{st})
		return err
	}
	return syncDir(l.dir)
}

// A log written before BLAKE3 names its files by SHA-256 in "LRG1"
// pointers that carry a CRC32C: they read back, and a damaged file is
// found by its CRC.
func TestSHA256Pointers(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir).(fileLog).Log
	ctx := t.Context()
	v := noise(3, 5000)
	sum := sha256.Sum256(v)
	p := []byte{pointerMark}
	p = append(p, sha256Tag...)
	p = append(p, sum[:]...)
	p = binary.LittleEndian.AppendUint64(p, uint64(len(v)))
	p = binary.LittleEndian.AppendUint32(p, crc32.Checksum(v, castagnoli))
	_, _, err := l.notePending([][32]byte{sum})
	require.NoError(t, err)
	require.NoError(t, l.writeFile(sum, v))
	i, err := l.Log.Append(ctx, p)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	l2 := openAt(t, dir)
	got, err := l2.Read(i)
	require.NoError(t, err)
	require.Equal(t, v, got)
	require.NoError(t, l2.Close())

	damaged := bytes.Clone(v)
	damaged[100] ^= 1
	require.NoError(t, os.WriteFile(filepath.Join(dir, fileName(sum)), damaged, 0o644))
	l3 := openAt(t, dir)
	defer l3.Close()
	_, err = l3.Read(i)
	require.ErrorIs(t, err, ErrCorrupt)
}

// openInterval opens the log at dir synced every hour: only Sync and Close
// sync it.
func openInterval(t *testing.T, dir string) storage.Log {
	t.Helper()
	l, err := Wrap(disk.OpenLog, testOptions)(t.Context(), storage.LogOptions{Dir: dir, SyncInterval: time.Hour, SegmentBytes: 64 << 10})
	require.NoError(t, err)
	return l
}

// snapshot copies dir's files, but skip, as a crash of the machine leaves
// them: what the page cache holds, less what never reached the disk.
func snapshot(t *testing.T, dir string, skip func(name string) bool) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() || skip(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(out, e.Name()), b, 0o644))
	}
	return out
}

// A log synced on an interval writes its large files without an fsync
// each; its syncs sync them first. A crash of the machine after a pointer
// reached the disk but before its file did (no sync between) cuts the log
// before that pointer at the next open: those records were never synced,
// and the ones a sync covered are all there.
func TestIntervalSyncsFilesBeforeTheLog(t *testing.T) {
	ctx := t.Context()
	for name, lose := range map[string]func(dir, file string) bool{
		"file missing": func(_, file string) bool { return true },
		"file short": func(dir, file string) bool {
			require.NoError(t, os.Truncate(filepath.Join(dir, file), 100))
			return false
		},
		"file whole": func(_, _ string) bool { return false },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := openInterval(t, dir)
			v1, v2 := noise(1, 5000), noise(2, 5000)
			i0, err := l.Append(ctx, []byte("small"))
			require.NoError(t, err)
			i1, err := l.Append(ctx, v1)
			require.NoError(t, err)
			require.NoError(t, l.Sync(ctx))
			i2, err := l.Append(ctx, v2)
			require.NoError(t, err)
			i3, err := l.Append(ctx, []byte("after"))
			require.NoError(t, err)

			f2 := fileName(sha(v2))
			crashed := snapshot(t, dir, func(n string) bool { return n == f2 && lose(dir, n) })
			require.NoError(t, l.Close())

			l2 := openInterval(t, crashed)
			defer l2.Close()
			got, err := l2.Read(i1)
			require.NoError(t, err)
			require.Equal(t, v1, got)
			got, err = l2.Read(i0)
			require.NoError(t, err)
			require.Equal(t, []byte("small"), got)
			if name == "file whole" {
				require.Equal(t, i3, l2.LastIndex())
				got, err = l2.Read(i2)
				require.NoError(t, err)
				require.Equal(t, v2, got)
				return
			}
			require.Equal(t, i2-1, l2.LastIndex())
			require.Equal(t, []string{fileName(sha(v1))}, largeFiles(t, crashed))
			i, err := l2.Append(ctx, v2)
			require.NoError(t, err)
			require.Equal(t, i2, i)
			got, err = l2.Read(i)
			require.NoError(t, err)
			require.Equal(t, v2, got)
		})
	}
}

// A log synced on an interval notes each sync's reach in the journal once
// the files are durable, and the journal survives a reopen with it.
func TestIntervalSyncNotesTheFilesSynced(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	l := openInterval(t, dir)
	inner := l.(fileLog).Log
	i, err := l.Append(ctx, noise(1, 5000))
	require.NoError(t, err)
	inner.mu.Lock()
	require.True(t, inner.dirty)
	require.Len(t, inner.unsynced, 1)
	inner.mu.Unlock()
	require.NoError(t, l.Sync(ctx))
	inner.mu.Lock()
	require.False(t, inner.dirty)
	require.Empty(t, inner.unsynced)
	require.GreaterOrEqual(t, inner.through, i)
	inner.mu.Unlock()
	require.NoError(t, l.Close())

	l2 := openInterval(t, dir)
	defer l2.Close()
	require.GreaterOrEqual(t, l2.(fileLog).through, i)
	got, err := l2.Read(i)
	require.NoError(t, err)
	require.Equal(t, noise(1, 5000), got)
}

// OpenRecord hands a large record's file, its head checked, and a Verify
// that checks the rest; a small record is not in a file.
func TestOpenRecord(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	defer l.Close()
	ctx := t.Context()
	rf := l.(storage.RecordFiles)
	v := noise(4, 9000)
	i, err := l.Append(ctx, v)
	require.NoError(t, err)
	small, err := l.Append(ctx, []byte("small"))
	require.NoError(t, err)

	_, ok, err := rf.OpenRecord(small)
	require.NoError(t, err)
	require.False(t, ok)
	rec, size, err := rf.ReadHead(small)
	require.NoError(t, err)
	require.Equal(t, []byte("small"), rec)
	require.Equal(t, int64(5), size)
	rec, size, err = rf.ReadHead(i)
	require.NoError(t, err)
	require.Equal(t, v[:storage.RecordHeadBytes], rec)
	require.Equal(t, int64(len(v)), size)

	f, ok, err := rf.OpenRecord(i)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(len(v)), f.Size)
	require.Equal(t, v[:storage.RecordHeadBytes], f.Head)
	require.NoError(t, f.Verify())
	got := make([]byte, len(v))
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, v, got)
	require.NoError(t, f.Close())

	path := filepath.Join(dir, fileName(sha(v)))
	for name, at := range map[string]int{"past the head": 8000, "in the head": 10} {
		t.Run(name, func(t *testing.T) {
			damaged := bytes.Clone(v)
			damaged[at] ^= 1
			require.NoError(t, os.WriteFile(path, damaged, 0o644))
			f, ok, err := rf.OpenRecord(i)
			if at < storage.RecordHeadBytes {
				require.ErrorIs(t, err, ErrCorrupt)
				return
			}
			require.NoError(t, err)
			require.True(t, ok)
			defer f.Close()
			require.ErrorIs(t, f.Verify(), ErrCorrupt)
		})
	}
}

// CheckDir finds a damaged file by its name's hash, and takes the files
// of both hashes.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	l := openAt(t, dir)
	v := noise(5, 9000)
	_, err := l.Append(t.Context(), v)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	old := noise(6, 3000)
	s := sha256.Sum256(old)
	require.NoError(t, os.WriteFile(filepath.Join(dir, fileName(s)), old, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "large-9.tmp"), []byte("cut"), 0o644))

	var read int64
	rep, err := CheckDir(dir, func(n int64) { read += n })
	require.NoError(t, err)
	require.Equal(t, 2, rep.Files)
	require.Equal(t, int64(len(v)+len(old)), rep.Bytes)
	require.Equal(t, rep.Bytes, read)
	require.Empty(t, rep.Damaged)
	require.Equal(t, []string{"large-9.tmp"}, rep.Temporary)

	damaged := bytes.Clone(v)
	damaged[5000] ^= 1
	require.NoError(t, os.WriteFile(filepath.Join(dir, fileName(sha(v))), damaged, 0o644))
	rep, err = CheckDir(dir, nil)
	require.NoError(t, err)
	require.Equal(t, []string{fileName(sha(v))}, rep.Damaged)
}

// Large appends from several goroutines on a log synced every
// millisecond, with Syncs beside them: every record reads back, before
// and after a reopen, and the journal's note covers them all.
func TestIntervalConcurrentAppendsAndSyncs(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	open := func() storage.Log {
		l, err := Wrap(disk.OpenLog, testOptions)(ctx, storage.LogOptions{Dir: dir, SyncInterval: time.Millisecond, SegmentBytes: 64 << 10})
		require.NoError(t, err)
		return l
	}
	l := open()
	var mu sync.Mutex
	want := map[uint64][]byte{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				v := noise(100*w+i, 2000+i*50)
				idx, err := l.Append(ctx, v)
				require.NoError(t, err)
				mu.Lock()
				want[idx] = v
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			require.NoError(t, l.Sync(ctx))
		}
	})
	wg.Wait()
	require.NoError(t, l.Sync(ctx))
	last := l.LastIndex()
	inner := l.(fileLog).Log
	inner.mu.Lock()
	through := inner.through
	inner.mu.Unlock()
	require.GreaterOrEqual(t, through, last)
	for idx, v := range want {
		got, err := l.Read(idx)
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	require.NoError(t, l.Close())
	l = open()
	defer l.Close()
	for idx, v := range want {
		got, err := l.Read(idx)
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}
