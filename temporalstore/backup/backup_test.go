package backup_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/matrixobject/s3api"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// openEngine opens an engine in dir with small segments, so that a backup
// spans many, and maintenance every 20 ms, so that reclamation runs
// during one.
func openEngine(t *testing.T, dir string) *temporalstore.Engine {
	t.Helper()
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: dir, MaintenanceInterval: 20 * time.Millisecond,
		DefaultTableOptions: temporalstore.TableOptions{Shards: 2, SegmentBytes: 64 << 10}})
	require.NoError(t, err)
	return e
}

func set(t *testing.T, e *temporalstore.Engine, k, v string) {
	t.Helper()
	_, err := e.Execute(context.Background(), temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte(k), Value: []byte(v)})
	require.NoError(t, err)
}

func get(t *testing.T, e *temporalstore.Engine, k string) (string, bool) {
	t.Helper()
	r, err := e.Execute(context.Background(), temporalstore.Command{Kind: temporalstore.KindGet, Key: []byte(k)})
	require.NoError(t, err)
	return string(r.Value), r.Value != nil
}

func value(w, n int) string { return fmt.Sprintf("w%d-n%d-%0200d", w, n, n*7919+w) }

// writers write until stop, each key once; acked lists what they were told
// was written.
type writers struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked map[string]string
}

func startWriters(t *testing.T, e *temporalstore.Engine, n int) *writers {
	w := &writers{stop: make(chan struct{}), acked: map[string]string{}}
	for id := range n {
		w.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-w.stop:
					return
				default:
				}
				k, v := fmt.Sprintf("live:%d:%d", id, i), value(id, i)
				if _, err := e.Execute(context.Background(), temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte(k), Value: []byte(v)}); err != nil {
					return
				}
				// Overwrites leave dead records for compaction to move.
				if _, err := e.Execute(context.Background(), temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte(fmt.Sprintf("hot:%d", i%50)), Value: []byte(v)}); err != nil {
					return
				}
				w.mu.Lock()
				w.acked[k] = v
				w.mu.Unlock()
			}
		})
	}
	return w
}

func (w *writers) snapshot() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.acked))
	for k, v := range w.acked {
		out[k] = v
	}
	return out
}

// A backup taken while writers write (and maintenance reclaims) restores
// to an engine holding every write acknowledged before it began, byte for
// byte, and nothing that was never written; hashes from the checkpoint
// images too.
func TestBackupUnderWritesRestoresEveryAcknowledgedWrite(t *testing.T) {
	for _, kind := range []string{"dir", "s3"} {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			e := openEngine(t, t.TempDir())
			defer e.Close()
			for i := range 2000 {
				set(t, e, fmt.Sprintf("pre:%d", i), value(0, i))
			}
			for i := range 50 {
				_, err := e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindHSet, Key: []byte(fmt.Sprintf("h:%d", i)), Args: [][]byte{[]byte("f"), []byte(fmt.Sprint(i))}})
				require.NoError(t, err)
			}
			w := startWriters(t, e, 4)
			time.Sleep(200 * time.Millisecond)
			before := w.snapshot()
			var tgt backup.Target
			var src backup.Source
			if kind == "dir" {
				d := backup.NewDir(filepath.Join(t.TempDir(), "b"))
				tgt, src = d, d
			} else {
				s3 := newS3(t)
				tgt, src = s3, s3
			}
			var reports atomic.Int64
			m, err := backup.Run(ctx, tgt, backup.Options{Progress: func(backup.Progress) { reports.Add(1) }, ProgressEvery: time.Millisecond}, backup.Engine(e))
			require.NoError(t, err)
			time.Sleep(100 * time.Millisecond)
			close(w.stop)
			w.wg.Wait()
			require.Positive(t, reports.Load())
			require.NotEmpty(t, m.Shards)
			require.Greater(t, len(m.Files), 2*len(m.Shards), "several segments a shard")

			_, err = backup.Verify(ctx, src, backup.Options{})
			require.NoError(t, err)
			dir := filepath.Join(t.TempDir(), "restored")
			_, err = backup.Restore(ctx, src, dir, backup.Options{})
			require.NoError(t, err)
			r, err := local.Open(ctx, temporalstore.Options{Dir: filepath.Join(dir, "engine")})
			require.NoError(t, err)
			defer r.Close()
			for i := range 2000 {
				v, ok := get(t, r, fmt.Sprintf("pre:%d", i))
				require.True(t, ok)
				require.Equal(t, value(0, i), v)
			}
			for k, want := range before {
				v, ok := get(t, r, k)
				require.True(t, ok, "acknowledged before the backup: %s", k)
				require.Equal(t, want, v)
			}
			// Writes made during the backup are there whole or not at all.
			after := w.snapshot()
			var in int
			for k, want := range after {
				if v, ok := get(t, r, k); ok {
					require.Equal(t, want, v)
					in++
				}
			}
			require.GreaterOrEqual(t, in, len(before))
			for i := range 50 {
				resp, err := r.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindHGet, Key: []byte(fmt.Sprintf("h:%d", i)), Args: [][]byte{[]byte("f")}})
				require.NoError(t, err)
				require.Equal(t, fmt.Sprint(i), string(resp.Value))
			}
			// A second backup into the same place is refused.
			_, err = backup.Run(ctx, tgt, backup.Options{}, backup.Engine(e))
			require.ErrorIs(t, err, backup.ErrNotEmpty)
		})
	}
}

func newS3(t *testing.T) *backup.S3 {
	t.Helper()
	ob, err := matrixobject.Open(t.TempDir(), matrixobject.Options{})
	require.NoError(t, err)
	h, err := s3api.New(ob, s3api.Options{Credentials: map[string]string{"key": "secret"}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); ob.Close() })
	// Small parts, so that files span several.
	s, err := backup.NewS3(t.Context(), backup.S3Options{Endpoint: srv.URL, Bucket: "backups", Prefix: "b1", AccessKey: "key", SecretKey: "secret", PartBytes: 40 << 10})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// A damaged, truncated or missing file fails Verify and Restore by name;
// the restore leaves its directory empty, and a backup with no manifest
// or a directory holding anything is refused.
func TestRestoreRefusesWhatDoesNotCheckOut(t *testing.T) {
	ctx := t.Context()
	e := openEngine(t, t.TempDir())
	for i := range 500 {
		set(t, e, fmt.Sprintf("k%d", i), value(1, i))
	}
	// The admin state goes with the data: tenants' limits, read-only shards.
	require.NoError(t, e.CreateTable(ctx, "acme", "orders", temporalstore.TableOptions{Shards: 2}))
	require.NoError(t, e.SetTableReadOnly(ctx, "acme", "orders", 1, true))
	require.NoError(t, e.SetTenantQPS(ctx, "acme", 50))
	good := filepath.Join(t.TempDir(), "good")
	m, err := backup.Run(ctx, backup.NewDir(good), backup.Options{}, backup.Engine(e))
	require.NoError(t, err)
	require.NoError(t, e.Close())
	restored := t.TempDir()
	_, err = backup.Restore(ctx, backup.NewDir(good), restored, backup.Options{})
	require.NoError(t, err)
	r, err := local.Open(ctx, temporalstore.Options{Dir: filepath.Join(restored, "engine")})
	require.NoError(t, err)
	info, err := r.DescribeTable("acme", "orders")
	require.NoError(t, err)
	require.Equal(t, []int{1}, info.ReadOnlyShards)
	qps, own := r.TenantQPS("acme")
	require.True(t, own)
	require.Equal(t, 50.0, qps)
	require.NoError(t, r.Close())

	clone := func(t *testing.T) string {
		dst := filepath.Join(t.TempDir(), "b")
		require.NoError(t, os.CopyFS(dst, os.DirFS(good)))
		return dst
	}
	var wal string
	for _, f := range m.Files {
		if filepath.Ext(f.Path) == ".wal" {
			wal = f.Path
			break
		}
	}
	require.NotEmpty(t, wal)
	for _, tc := range []struct {
		name   string
		damage func(dir string)
		want   error
	}{
		{"flipped byte", func(dir string) {
			p := filepath.Join(dir, wal)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)/2] ^= 1
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, backup.ErrChecksum},
		{"truncated", func(dir string) {
			p := filepath.Join(dir, wal)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, fi.Size()-1))
		}, backup.ErrChecksum},
		{"missing file", func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, wal))) }, os.ErrNotExist},
		{"no manifest", func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, backup.ManifestName))) }, backup.ErrIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := clone(t)
			tc.damage(b)
			_, err := backup.Verify(ctx, backup.NewDir(b), backup.Options{})
			require.ErrorIs(t, err, tc.want)
			dst := filepath.Join(t.TempDir(), "r")
			_, err = backup.Restore(ctx, backup.NewDir(b), dst, backup.Options{})
			require.ErrorIs(t, err, tc.want)
			entries, _ := os.ReadDir(dst)
			require.Empty(t, entries, "a failed restore leaves nothing behind")
		})
	}
	// A data directory may hold other things, but not the engine's.
	busy := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(busy, "x"), nil, 0o644))
	_, err = backup.Restore(ctx, backup.NewDir(good), busy, backup.Options{})
	require.NoError(t, err)
	_, err = backup.Restore(ctx, backup.NewDir(good), busy, backup.Options{})
	require.ErrorIs(t, err, backup.ErrNotEmpty)
}

// The engine refuses a directory a restore has not finished.
func TestEngineRefusesAnUnfinishedRestore(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, temporalstore.RestoreMarker), nil, 0o644))
	_, err := local.Open(t.Context(), temporalstore.Options{Dir: dir})
	require.ErrorIs(t, err, temporalstore.ErrRestoreIncomplete)
}

// A process killed in the middle of a backup leaves one that Verify and
// Restore refuse as incomplete, never a partial restore.
func TestBackupKilledMidwayIsRefused(t *testing.T) {
	if dst := os.Getenv("BACKUP_TEST_CHILD"); dst != "" {
		e := openEngine(t, os.Getenv("BACKUP_TEST_DATA"))
		for i := range 3000 {
			set(t, e, fmt.Sprintf("k%d", i), value(2, i))
		}
		_, err := backup.Run(context.Background(), backup.NewDir(dst), backup.Options{Workers: 1, ProgressEvery: time.Nanosecond, Progress: func(p backup.Progress) {
			if p.FilesDone >= 2 {
				fmt.Println("copying")
				time.Sleep(time.Hour) // killed here
			}
		}}, backup.Engine(e))
		require.NoError(t, err)
		return
	}
	dst := filepath.Join(t.TempDir(), "b")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBackupKilledMidwayIsRefused$")
	cmd.Env = append(os.Environ(), "BACKUP_TEST_CHILD="+dst, "BACKUP_TEST_DATA="+t.TempDir())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 7)
	_, err = out.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "copying", string(buf))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	entries, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the backup had begun")
	_, err = backup.Verify(t.Context(), backup.NewDir(dst), backup.Options{})
	require.ErrorIs(t, err, backup.ErrIncomplete)
	r := filepath.Join(t.TempDir(), "r")
	_, err = backup.Restore(t.Context(), backup.NewDir(dst), r, backup.Options{})
	require.ErrorIs(t, err, backup.ErrIncomplete)
	entries, _ = os.ReadDir(r)
	require.Empty(t, entries)
}

// filesComponent holds the files it lists in dir, some perhaps gone.
type filesComponent struct {
	dir       string
	files     []string
	mayVanish bool
}

func (filesComponent) Name() string { return "files" }

func (c filesComponent) Hold(context.Context) (backup.Held, error) {
	h := backup.Held{Dir: c.dir, Release: func() {}, MayVanish: c.mayVanish}
	for _, f := range c.files {
		h.Files = append(h.Files, backup.File{Path: f, Size: -1})
	}
	return h, nil
}

// A file gone between Hold and its opening fails the backup, unless the
// component says its files may vanish: then it is left out.
func TestBackupOfFilesThatMayVanish(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kept"), []byte("kept"), 0o644))
	files := []string{"kept", "deleted"}

	_, err := backup.Run(ctx, backup.NewDir(filepath.Join(t.TempDir(), "b")), backup.Options{}, filesComponent{dir, files, false})
	require.ErrorIs(t, err, os.ErrNotExist)

	b := filepath.Join(t.TempDir(), "b")
	m, err := backup.Run(ctx, backup.NewDir(b), backup.Options{}, filesComponent{dir, files, true})
	require.NoError(t, err)
	require.Len(t, m.Files, 1)
	require.Equal(t, "files/kept", m.Files[0].Path)
	_, err = backup.Verify(ctx, backup.NewDir(b), backup.Options{})
	require.NoError(t, err)
}
