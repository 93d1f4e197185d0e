package backupbench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Config is one `bench backup` run.
type Config struct {
	// Bytes is the data written into the engine before the runs.
	Bytes int64
	// ValueBytes is the size of each (incompressible) value.
	ValueBytes int
	// Repeats is how many times each system runs, alternating.
	Repeats int
	// Dir is the base of the run's directories; put it on the disk you
	// care about.
	Dir   string
	Quick bool
	// Out is the JSON report path; empty: <repo root>/bench-results/backup.json.
	Out string
}

// DefaultConfig is the full run, or with quick a reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{Bytes: 1 << 30, ValueBytes: 4 << 10, Repeats: 3, Dir: os.TempDir()}
	if quick {
		c.Quick, c.Bytes = true, 256<<20
	}
	return c
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 256 MiB of data, 3 repeats", nil),
	opt("bytes", "BENCH_BYTES", "n", "bytes of values written before the runs (default 1073741824)", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		c.Bytes = n
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "repeats of every system, alternating ours and cp (default 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for the data, the backups and the copies (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/backup.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench backup`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench backup" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
}

// Command runs `bench backup` and returns the exit code.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "backup", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}

// Repeat is one repeat's figures, MB/s of the data directory's bytes.
type Repeat struct {
	OursBackupMBps  float64 `json:"ours_backup_mbps"`
	CPBackupMBps    float64 `json:"cp_backup_mbps"`
	OursRestoreMBps float64 `json:"ours_restore_mbps"`
	CPRestoreMBps   float64 `json:"cp_restore_mbps"`
	// BackupBytes is what our backup copied (no preallocated tails).
	BackupBytes int64 `json:"backup_bytes"`
}

// Report is the JSON the run writes.
type Report struct {
	Host        benchkit.Host    `json:"host"`
	Filesystem  string           `json:"filesystem"`
	Config      Config           `json:"config"`
	DataBytes   int64            `json:"data_dir_bytes"`
	Repeats     []Repeat         `json:"repeats"`
	BackupRatio benchkit.Summary `json:"backup_vs_cp_ratio"`
	RestoreRat  benchkit.Summary `json:"restore_vs_cp_ratio"`
	Summary     benchkit.Pairs   `json:"summary"`
}

// Run loads an engine, then alternates our backup and restore with cp -a
// + sync, Repeats times.
func Run(ctx context.Context, c Config, stdout io.Writer, log *slog.Logger) error {
	if c.Repeats < 1 || c.Bytes < 1 || c.ValueBytes < 1 {
		return errors.New("bytes, value bytes and repeats must be positive")
	}
	base, err := os.MkdirTemp(c.Dir, "bench-backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	data := filepath.Join(base, "data")
	e, err := local.Open(ctx, temporalstore.Options{Dir: data, DefaultTableOptions: temporalstore.TableOptions{Shards: 2, Async: true}})
	if err != nil {
		return err
	}
	defer e.Close()
	if err := load(ctx, e, c, log); err != nil {
		return err
	}
	if err := e.Checkpoint(ctx); err != nil {
		return err
	}
	dataBytes, err := dirBytes(data)
	if err != nil {
		return err
	}
	log.Info("loaded", "data_dir_mb", dataBytes>>20)
	mbps := func(d time.Duration) float64 { return float64(dataBytes) / 1e6 / d.Seconds() }
	rep := Report{Host: benchkit.HostConditions(), Filesystem: benchkit.Filesystem(base), Config: c, DataBytes: dataBytes}
	rep.Repeats = make([]Repeat, c.Repeats)
	oursBackup := filepath.Join(base, "backup-ours")
	err = benchkit.Alternate(ctx, c.Repeats, []string{"ours", "cp"}, func(ctx context.Context, r int, system string) error {
		rp := &rep.Repeats[r]
		bdst, rdst := filepath.Join(base, "backup-"+system), filepath.Join(base, "restore-"+system)
		for _, d := range []string{bdst, rdst} {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
		// Earlier runs' dirty pages are not this run's to write.
		if err := syncAll(); err != nil {
			return err
		}
		began := time.Now()
		if system == "ours" {
			m, err := backup.Run(ctx, backup.NewDir(bdst), backup.Options{}, backup.Engine(e))
			if err != nil {
				return err
			}
			rp.OursBackupMBps, rp.BackupBytes = mbps(time.Since(began)), m.Bytes
		} else {
			if err := cpSync(ctx, data, bdst); err != nil {
				return err
			}
			rp.CPBackupMBps = mbps(time.Since(began))
		}
		if err := syncAll(); err != nil {
			return err
		}
		// Restore: ours from our backup, cp from the same backup.
		began = time.Now()
		if system == "ours" {
			if _, err := backup.Restore(ctx, backup.NewDir(oursBackup), rdst, backup.Options{}); err != nil {
				return err
			}
			rp.OursRestoreMBps = mbps(time.Since(began))
		} else {
			if err := cpSync(ctx, oursBackup, rdst); err != nil {
				return err
			}
			rp.CPRestoreMBps = mbps(time.Since(began))
		}
		b, rs := rp.OursBackupMBps, rp.OursRestoreMBps
		if system == "cp" {
			b, rs = rp.CPBackupMBps, rp.CPRestoreMBps
		}
		log.Info("repeat", "repeat", r+1, "system", system, "backup_mbps", int(b), "restore_mbps", int(rs))
		if system == "cp" {
			if err := os.RemoveAll(bdst); err != nil {
				return err
			}
		}
		return os.RemoveAll(rdst)
	})
	if err != nil {
		return err
	}
	col := func(f func(Repeat) float64) []float64 { return benchkit.Column(rep.Repeats, f) }
	rep.BackupRatio = benchkit.RatioSpread(col(func(r Repeat) float64 { return r.OursBackupMBps }), col(func(r Repeat) float64 { return r.CPBackupMBps }), benchkit.HigherIsBetter)
	rep.RestoreRat = benchkit.RatioSpread(col(func(r Repeat) float64 { return r.OursRestoreMBps }), col(func(r Repeat) float64 { return r.CPRestoreMBps }), benchkit.HigherIsBetter)
	med := func(f func(Repeat) float64) float64 { return benchkit.Summarize(col(f)).Median }
	// In the order the last line prints them: the ratios first.
	rep.Summary = benchkit.Pairs{
		benchkit.NewPair("backup_vs_cp_ratio", rep.BackupRatio.Median, 2),
		benchkit.NewPair("restore_vs_cp_ratio", rep.RestoreRat.Median, 2),
		benchkit.NewPair("backup_mbps", med(func(r Repeat) float64 { return r.OursBackupMBps }), 0),
		benchkit.NewPair("cp_backup_mbps", med(func(r Repeat) float64 { return r.CPBackupMBps }), 0),
		benchkit.NewPair("restore_mbps", med(func(r Repeat) float64 { return r.OursRestoreMBps }), 0),
		benchkit.NewPair("cp_restore_mbps", med(func(r Repeat) float64 { return r.CPRestoreMBps }), 0),
	}
	out := c.Out
	if out == "" {
		if out, err = benchkit.ResultPath("backup"); err != nil {
			return err
		}
	}
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ratios (min/median/max): backup %.2f/%.2f/%.2f restore %.2f/%.2f/%.2f; data dir %d MiB; report %s\n",
		rep.BackupRatio.Min, rep.BackupRatio.Median, rep.BackupRatio.Max, rep.RestoreRat.Min, rep.RestoreRat.Median, rep.RestoreRat.Max, dataBytes>>20, out)
	fmt.Fprintln(stdout, benchkit.SummaryLine("backup", rep.Summary))
	return nil
}

// load writes c.Bytes of incompressible values, logging progress.
func load(ctx context.Context, e *temporalstore.Engine, c Config, log *slog.Logger) error {
	n := c.Bytes / int64(c.ValueBytes)
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	began := time.Now()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				d := done.Load()
				el := time.Since(began)
				log.Info("loading", "values", d, "of", n, "eta", (time.Duration(float64(el) / float64(max(d, 1)) * float64(n-d))).Round(time.Second))
			}
		}
	}()
	for range 4 {
		wg.Go(func() {
			v := make([]byte, c.ValueBytes)
			for {
				i := next.Add(1) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				rand.Read(v)
				if _, err := e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("k:" + strconv.FormatInt(i, 10)), Value: v}); err != nil {
					errc <- err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	select {
	case err := <-errc:
		return err
	default:
	}
	return ctx.Err()
}

func cpSync(ctx context.Context, src, dst string) error {
	if out, err := exec.CommandContext(ctx, "cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a: %w: %s", err, out)
	}
	return syncAll()
}

func syncAll() error {
	if out, err := exec.Command("sync").CombinedOutput(); err != nil {
		return fmt.Errorf("sync: %w: %s", err, out)
	}
	return nil
}

// dirBytes is the apparent size of the files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}
