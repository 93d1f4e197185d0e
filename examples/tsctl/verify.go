package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/largelog"
)

// verifyReport is verify's result for a data directory.
type verifyReport struct {
	OK     bool         `json:"ok"`
	Data   string       `json:"data"`
	Engine string       `json:"engine"`
	Shards []shardCheck `json:"shards"`
	// Streams are the logs of the server's streams (<data>/streams).
	Streams []streamCheck `json:"streams"`
	Totals  checkTotals   `json:"totals"`
	// Problems are the damage found, each naming its table, shard and
	// file; any makes verify fail.
	Problems []string `json:"problems"`
	// Notes are what Open repairs or works around by itself (a torn
	// final write, a damaged older checkpoint).
	Notes []string `json:"notes"`
	InUse bool     `json:"in_use"`
}

type checkTotals struct {
	Shards   int    `json:"shards"`
	Images   int    `json:"images"`
	Segments int    `json:"segments"`
	Records  uint64 `json:"records"`
	Bytes    int64  `json:"bytes"`
}

type shardCheck struct {
	Namespace string       `json:"namespace"`
	Table     string       `json:"table"`
	Shard     int          `json:"shard"`
	Dir       string       `json:"dir"`
	Images    []imageCheck `json:"images"`
	Log       logCheck     `json:"log"`
	// Large is the check of the large values' files.
	Large largeCheck `json:"large"`
	// OpensFrom is the applied index of the image Open would start from;
	// 0 when it replays the whole log.
	OpensFrom uint64 `json:"opens_from"`
	InUse     bool   `json:"in_use,omitempty"`
	OK        bool   `json:"ok"`
}

type streamCheck struct {
	Dir string   `json:"dir"`
	Log logCheck `json:"log"`
	OK  bool     `json:"ok"`
}

// largeCheck counts the large values' files read and checked against
// their names' hashes.
type largeCheck struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

type imageCheck struct {
	Name    string `json:"name"`
	Applied uint64 `json:"applied"`
	Error   string `json:"error,omitempty"`
}

type logCheck struct {
	Segments     int             `json:"segments"`
	Records      int             `json:"records"`
	First        uint64          `json:"first"`
	Last         uint64          `json:"last"`
	Bytes        int64           `json:"bytes"`
	TornTail     *wal.TailDamage `json:"torn_tail,omitempty"`
	DroppedGroup int             `json:"dropped_group,omitempty"`
}

// backupReport is verify --backup's result.
type backupReport struct {
	OK      bool      `json:"ok"`
	Source  string    `json:"source"`
	Created time.Time `json:"created,omitzero"`
	Files   int       `json:"files"`
	Bytes   int64     `json:"bytes"`
	Shards  int       `json:"shards"`
	// Problems are the files that do not match the manifest, or why the
	// backup could not be read.
	Problems []string `json:"problems"`
}

// s3Flags are the flags of a backup in S3 (verify --backup, restore
// --from).
type s3Flags struct {
	endpoint, key, region string
}

func (f *s3Flags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.endpoint, "s3-endpoint", "", "S3 API base URL of an s3:// backup, e.g. http://127.0.0.1:9000")
	cmd.Flags().StringVar(&f.key, "s3-key", "", "access-key:secret-key signing S3 requests; empty sends them unsigned")
	cmd.Flags().StringVar(&f.region, "s3-region", "us-east-1", "region of the S3 signatures' scope")
}

// source opens the backup at loc: a directory, or s3://bucket/prefix. The
// returned close releases it.
func (f *s3Flags) source(ctx context.Context, loc string) (backup.Source, func(), error) {
	rest, ok := strings.CutPrefix(loc, "s3://")
	if !ok {
		// A path given wrong is no "incomplete backup".
		if _, err := os.Stat(loc); err != nil {
			return nil, nil, err
		}
		return backup.NewDir(loc), func() {}, nil
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" || strings.Trim(prefix, "/") == "" {
		return nil, nil, fmt.Errorf("%w: %q is not s3://bucket/prefix", errUsage, loc)
	}
	if f.endpoint == "" {
		return nil, nil, fmt.Errorf("%w: an s3:// backup needs --s3-endpoint", errUsage)
	}
	o := backup.S3Options{Endpoint: f.endpoint, Bucket: bucket, Prefix: prefix, Region: f.region}
	if f.key != "" {
		k, s, ok := strings.Cut(f.key, ":")
		if !ok || k == "" || s == "" {
			return nil, nil, fmt.Errorf("%w: --s3-key is not access-key:secret-key", errUsage)
		}
		o.AccessKey, o.SecretKey = k, s
	}
	s3, err := backup.NewS3(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	return s3, func() { s3.Close() }, nil
}

func (a *app) verifyCmd() *cobra.Command {
	var from string
	var s3 s3Flags
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check a data directory's checkpoints and logs, or a backup, offline",
		Long: "verify reads every checkpoint image and log segment under --data without writing to it and reports " +
			"damage, naming the file and offset; a torn final write (normal after a crash) is reported but is no " +
			"error. With --backup it checks every file of a backup (a directory or s3://bucket/prefix) against its " +
			"manifest's sizes and checksums (XXH64) instead. It exits 1 when it finds damage.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from != "" {
				return a.verifyBackup(cmd.Context(), &s3, from)
			}
			rep, err := a.verifyData(cmd.Context(), a.dataDir)
			if err != nil {
				return err
			}
			a.emit(rep, rep.text)
			if !rep.OK {
				return errReported
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "backup", "", "check the backup at this directory or s3://bucket/prefix instead of --data")
	s3.add(cmd)
	return cmd
}

// verifyData checks every shard of the engine in data.
func (a *app) verifyData(ctx context.Context, data string) (*verifyReport, error) {
	engine, err := engineDir(data)
	if err != nil {
		return nil, err
	}
	cat, err := temporalstore.ReadCatalog(engine)
	if err != nil {
		return nil, err
	}
	type shardJob struct {
		c  temporalstore.CatalogTable
		sf shardFiles
	}
	var jobs []shardJob
	var total int64
	streams, err := streamDirs(data, engine)
	if err != nil {
		return nil, err
	}
	for _, sf := range streams {
		for _, f := range sf.Segments {
			total += f.Size
		}
	}
	for _, c := range cat {
		shards, err := tableShards(engine, c)
		if err != nil {
			return nil, err
		}
		for _, sf := range shards {
			jobs = append(jobs, shardJob{c, sf})
			for _, f := range sf.Images {
				total += f.Size
			}
			for _, f := range sf.Segments {
				total += f.Size
			}
			total += sf.LargeBytes
		}
	}
	rep := &verifyReport{Data: data, Engine: engine, Shards: []shardCheck{}, Streams: []streamCheck{}, Problems: []string{}, Notes: []string{}}
	b := a.newBar("verify", total, true)
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			b.finish(false)
			return nil, err
		}
		sc, problems, notes, err := checkShard(j.c, j.sf, b)
		if err != nil {
			b.finish(false)
			return nil, err
		}
		rep.Shards = append(rep.Shards, sc)
		rep.Problems = append(rep.Problems, problems...)
		rep.Notes = append(rep.Notes, notes...)
		rep.InUse = rep.InUse || sc.InUse
		rep.Totals.Shards++
		rep.Totals.Images += len(sc.Images)
		rep.Totals.Segments += sc.Log.Segments
		rep.Totals.Records += uint64(sc.Log.Records)
		rep.Totals.Bytes += sc.Log.Bytes
		for _, f := range j.sf.Images {
			rep.Totals.Bytes += f.Size
		}
		rep.Totals.Bytes += sc.Large.Bytes
	}
	for _, sf := range streams {
		sc := streamCheck{Dir: sf.Dir}
		var problems, notes []string
		var err error
		sc.Log, _, problems, notes, err = checkLog("streams "+filepath.Base(sf.Dir), sf, b)
		if err != nil {
			b.finish(false)
			return nil, err
		}
		sc.OK = len(problems) == 0
		rep.Streams = append(rep.Streams, sc)
		rep.Problems = append(rep.Problems, problems...)
		rep.Notes = append(rep.Notes, notes...)
		rep.InUse = rep.InUse || sf.InUse
		rep.Totals.Segments += sc.Log.Segments
		rep.Totals.Records += uint64(sc.Log.Records)
		rep.Totals.Bytes += sc.Log.Bytes
	}
	b.finish(true)
	if rep.InUse {
		rep.Notes = append(rep.Notes, "a running process holds logs open: files changed while they were read, and a tail being written may show as torn")
	}
	rep.OK = len(rep.Problems) == 0
	return rep, nil
}

// checkLog checks the log in sf's directory, advancing b by its segments'
// bytes: its report, problems and notes naming where, and an error when it
// could not be read at all.
func checkLog(where string, sf shardFiles, b *bar) (logCheck, wal.CheckReport, []string, []string, error) {
	rep, err := wal.Check(sf.Dir)
	for _, f := range sf.Segments {
		b.add(f.Size)
	}
	if err != nil && !errors.Is(err, wal.ErrCorrupt) && !errors.Is(err, wal.ErrUnsupportedFormat) {
		return logCheck{}, rep, nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	lc := logCheck{Segments: len(rep.Segments), Records: rep.Records, First: rep.First, Last: rep.Last,
		Bytes: rep.Bytes, TornTail: rep.TornTail, DroppedGroup: rep.DroppedGroup}
	problems, notes := logFindings(where, sf.Dir, rep)
	return lc, rep, problems, notes, nil
}

// checkShard checks one shard's images and log, advancing b by the bytes
// read. It returns the shard's report, its problems and notes, each naming
// the shard, and an error when the files could not be read at all.
func checkShard(c temporalstore.CatalogTable, sf shardFiles, b *bar) (shardCheck, []string, []string, error) {
	sc := shardCheck{Namespace: c.Namespace, Table: c.Table, Shard: sf.Shard, Dir: sf.Dir, Images: []imageCheck{}, InUse: sf.InUse}
	var problems, notes []string
	where := fmt.Sprintf("%s/%s shard %d", c.Namespace, c.Table, sf.Shard)
	if sf.Missing {
		return sc, []string{fmt.Sprintf("%s: directory %s is missing", where, sf.Dir)}, nil, nil
	}
	good := map[uint64]bool{}
	for _, f := range sf.Images {
		applied, err := temporalstore.CheckImage(filepath.Join(sf.Dir, f.Name))
		ic := imageCheck{Name: f.Name, Applied: applied}
		if err != nil {
			ic.Error = err.Error()
			problems = append(problems, fmt.Sprintf("%s: checkpoint %s: %v", where, filepath.Join(sf.Dir, f.Name), err))
		} else {
			good[applied] = true
		}
		sc.Images = append(sc.Images, ic)
		b.add(f.Size)
	}
	lc, rep, lp, ln, err := checkLog(where, sf, b)
	if err != nil {
		return sc, nil, nil, err
	}
	sc.Log = lc
	problems, notes = append(problems, lp...), append(notes, ln...)
	lr, err := largelog.CheckDir(sf.Dir, b.add)
	if err != nil {
		return sc, nil, nil, fmt.Errorf("%s: large values: %w", where, err)
	}
	sc.Large = largeCheck{Files: lr.Files, Bytes: lr.Bytes}
	for _, name := range lr.Damaged {
		problems = append(problems, fmt.Sprintf("%s: large value %s does not match the hash it is named by", where, filepath.Join(sf.Dir, name)))
	}
	for _, name := range lr.Temporary {
		notes = append(notes, fmt.Sprintf("%s: %s is a large write a crash cut: the server removes it at its next start", where, name))
	}
	// The image Open starts from: the newest that checks out and that the
	// log continues (its records up to the image's index may have been
	// reclaimed, those after it must be there).
	opens := false
	for i := len(sf.Images) - 1; i >= 0; i-- {
		applied := sf.Images[i].Index
		if !good[applied] {
			continue
		}
		if len(rep.Segments) > 0 && (applied > rep.Last || applied+1 < rep.First) {
			notes = append(notes, fmt.Sprintf("%s: checkpoint %s does not meet the log (records %d..%d): the server skips it", where, sf.Images[i].Name, rep.First, rep.Last))
			continue
		}
		if i < len(sf.Images)-1 {
			notes = append(notes, fmt.Sprintf("%s: the server starts from the older checkpoint %s", where, sf.Images[i].Name))
		}
		sc.OpensFrom, opens = applied, true
		break
	}
	if len(rep.Segments) == 0 && len(sf.Images) > 0 {
		problems = append(problems, fmt.Sprintf("%s: checkpoints but no log segment: the records the checkpoints index are gone", where))
	}
	if !opens && len(rep.Segments) > 0 && rep.First > 1 {
		problems = append(problems, fmt.Sprintf("%s: no usable checkpoint, and the log starts at record %d: the shard cannot be opened", where, rep.First))
	}
	sc.OK = len(problems) == 0
	return sc, problems, notes, nil
}

// recordsText is "records 5..9", or "no records".
func (l logCheck) recordsText() string {
	if l.Records == 0 {
		return "no records"
	}
	return fmt.Sprintf("records %d..%d", l.First, l.Last)
}

// logFindings are the problems and notes of a log's check, naming where
// and the log's directory dir.
func logFindings(where, dir string, rep wal.CheckReport) (problems, notes []string) {
	for _, e := range rep.Corrupt {
		problems = append(problems, fmt.Sprintf("%s: %s: %v", where, dir, e))
	}
	if t := rep.TornTail; t != nil {
		notes = append(notes, fmt.Sprintf("%s: torn final write in %s at offset %d (%s): the server cuts it at its next start", where, t.Segment, t.Offset, t.Reason))
	}
	if rep.DroppedGroup > 0 {
		notes = append(notes, fmt.Sprintf("%s: the log ends inside an unfinished group of %d records, which the server drops", where, rep.DroppedGroup))
	}
	return problems, notes
}

// streamDirs lists the streams' log directories beside the engine
// (<data>/streams/shard-NNN), none when data is an engine directory.
func streamDirs(data, engine string) ([]shardFiles, error) {
	if filepath.Clean(data) == filepath.Clean(engine) {
		return nil, nil
	}
	dirs, err := filepath.Glob(filepath.Join(data, "streams", "shard-*"))
	if err != nil {
		return nil, err
	}
	var out []shardFiles
	for i, d := range dirs {
		sf, err := listShard(i, d)
		if err != nil {
			return nil, err
		}
		out = append(out, sf)
	}
	return out, nil
}

func (r *verifyReport) text(w io.Writer) {
	fmt.Fprintf(w, "engine %s: %d shards, %d checkpoints; %d log segments, %d records, %s\n",
		r.Engine, r.Totals.Shards, r.Totals.Images, r.Totals.Segments, r.Totals.Records, humanBytes(r.Totals.Bytes))
	for _, s := range r.Shards {
		state := "ok"
		if !s.OK {
			state = "DAMAGED"
		}
		from := "the whole log"
		if s.OpensFrom > 0 {
			from = fmt.Sprintf("checkpoint %d", s.OpensFrom)
		}
		large := ""
		if s.Large.Files > 0 {
			large = fmt.Sprintf(", %d large values (%s)", s.Large.Files, humanBytes(s.Large.Bytes))
		}
		fmt.Fprintf(w, "  %s/%s shard %d: %s: %d images, %d segments, %s%s, opens from %s\n",
			s.Namespace, s.Table, s.Shard, state, len(s.Images), s.Log.Segments, s.Log.recordsText(), large, from)
	}
	for _, s := range r.Streams {
		state := "ok"
		if !s.OK {
			state = "DAMAGED"
		}
		fmt.Fprintf(w, "  streams %s: %s: %d segments, %s\n", filepath.Base(s.Dir), state, s.Log.Segments, s.Log.recordsText())
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "DAMAGE:", p)
	}
	if r.OK {
		fmt.Fprintln(w, "verify: ok")
	} else {
		fmt.Fprintf(w, "verify: %d problems found\n", len(r.Problems))
	}
}

// verifyBackup checks the backup at loc against its manifest.
func (a *app) verifyBackup(ctx context.Context, s3 *s3Flags, loc string) error {
	src, closeSrc, err := s3.source(ctx, loc)
	if err != nil {
		return err
	}
	defer closeSrc()
	rep := &backupReport{Source: src.String(), Problems: []string{}}
	b := a.newBar("verify backup", -1, true)
	m, err := backup.Verify(ctx, src, backup.Options{Progress: func(p backup.Progress) { b.set(p.BytesDone, p.Bytes) }})
	b.finish(err == nil)
	switch {
	case m == nil && err != nil && !errors.Is(err, backup.ErrIncomplete) && !errors.Is(err, backup.ErrManifest):
		return err
	case err != nil:
		for _, e := range unjoin(err) {
			rep.Problems = append(rep.Problems, e.Error())
		}
	}
	if m != nil {
		rep.Created, rep.Files, rep.Bytes, rep.Shards = m.Created, len(m.Files), m.Bytes, len(m.Shards)
	}
	rep.OK = len(rep.Problems) == 0
	a.emit(rep, rep.text)
	if !rep.OK {
		return errReported
	}
	return nil
}

// unjoin splits an errors.Join into its errors.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (r *backupReport) text(w io.Writer) {
	fmt.Fprintf(w, "backup %s\n", r.Source)
	if !r.Created.IsZero() {
		fmt.Fprintf(w, "  created %s: %d files, %d shards, %s\n", r.Created.Format(time.RFC3339), r.Files, r.Shards, humanBytes(r.Bytes))
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "DAMAGE:", p)
	}
	if r.OK {
		fmt.Fprintln(w, "verify: ok")
	} else {
		fmt.Fprintf(w, "verify: %d problems found\n", len(r.Problems))
	}
}
