package blobbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/temporalstore/temporalstore-go/temporalstore/blob"
	"github.com/temporalstore/temporalstore-go/temporalstore/client"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Report is the JSON a run writes.
type Report struct {
	Name        string            `json:"name"`
	Started     string            `json:"started"`
	TookSeconds float64           `json:"took_s"`
	Host        benchkit.Host     `json:"host"`
	Filesystem  string            `json:"filesystem"`
	Config      Config            `json:"config"`
	Conditions  map[string]string `json:"conditions"`
	// Blob is ours-blob against disk; RESP is ours-resp against redis.
	Blob Comparison `json:"blob_vs_disk"`
	// Ceiling is the blob arm against a null HTTP server writing and
	// reading the disk as the disk arm does: the transfer's own cost.
	Ceiling Comparison `json:"blob_vs_null_http"`
	// Hash is the SHA-256 the blob store computes of every upload,
	// alone on one core, against the disk arm: a bound on upload before
	// any transfer.
	Hash    Comparison     `json:"sha256_vs_disk"`
	RESP    Comparison     `json:"resp_vs_redis"`
	Summary benchkit.Pairs `json:"summary"`
}

// Comparison is ours against one peer, over the repeats.
type Comparison struct {
	Ours      string `json:"ours"`
	Peer      string `json:"peer"`
	ItemBytes int    `json:"item_bytes"`
	Items     int    `json:"items_per_repeat"`
	// Figures are keyed by what is timed: upload, download and
	// download_cold against the disk; set and get against Redis.
	Figures map[string]*Figure `json:"figures"`
	// OursRefused is the error our server answered a SET with, when it
	// did; ours' figures are then null.
	OursRefused string `json:"ours_refused,omitempty"`
}

// Figure is one timed pass in MB/s (10^6 bytes a second): ours' and the
// peer's min/median/max over the repeats, the min/median/max of the
// per-repeat ratios ours/peer (above 1, ours is faster), and each repeat.
type Figure struct {
	OursMBps  benchkit.Summary `json:"ours_mbps"`
	PeerMBps  benchkit.Summary `json:"peer_mbps"`
	Ratio     benchkit.Summary `json:"ratio"`
	PerRepeat []RepeatFigure   `json:"per_repeat"`
}

// RepeatFigure is one repeat of a Figure; null where the arm did not run.
type RepeatFigure struct {
	Ours  benchkit.Float `json:"ours_mbps"`
	Peer  benchkit.Float `json:"peer_mbps"`
	Ratio benchkit.Float `json:"ratio"`
}

// passes is one arm's repeat: MB/s of writing every item, reading them
// back, and reading them again from the disk; NaN for a pass not run.
type passes struct{ write, read, cold float64 }

// Run starts our server and redis-server, alternates the four arms
// Repeats times, writes the JSON report, and prints a table and the
// summary line to stdout.
func Run(ctx context.Context, c Config, stdout io.Writer, log *slog.Logger) error {
	if err := c.Validate(); err != nil {
		return err
	}
	began := time.Now()
	out := c.Out
	if out == "" {
		p, err := benchkit.ResultPath("blob")
		if err != nil {
			return err
		}
		out = p
	}
	base, err := os.MkdirTemp(c.Dir, "bench-blob-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	fsName := benchkit.Filesystem(base)
	if fsName == "tmpfs" || fsName == "ramfs" {
		log.Warn("bench dir is in memory: fsync costs nothing there", "dir", base, "fs", fsName)
	}
	bin := c.Server
	if bin == "" {
		log.Info("building examples/server")
		if bin, err = benchkit.BuildExample(base, "./examples/server", "ts-server"); err != nil {
			return err
		}
	}
	dirs := map[string]string{}
	for _, d := range []string{"ours", "null", "disk", "redis"} {
		dirs[d] = filepath.Join(base, d)
		if err := os.Mkdir(dirs[d], 0o755); err != nil {
			return err
		}
	}
	srv, err := benchkit.StartServerProcess(ctx, bin, dirs["ours"], nil, 0, serverArgs(c)...)
	if err != nil {
		return err
	}
	defer srv.Stop()
	rsrv, err := benchkit.StartRedisProcess(ctx, dirs["redis"], "--save", "", "--appendonly", "yes", "--appendfsync", c.RESPSync)
	if err != nil {
		return err
	}
	defer rsrv.Stop()
	hc, err := client.NewHTTP(client.HTTPOptions{BaseURL: "http://" + srv.HTTPAddr, MaxRetries: client.Disabled})
	if err != nil {
		return err
	}
	defer hc.Close()
	ours, peer := newRESPClient(srv.Addr), newRESPClient(rsrv.Addr)
	defer ours.Close()
	defer peer.Close()
	redisVersion := serverVersion(ctx, peer)

	log.Info("generating content", "blob_bytes", c.BlobBytes, "blobs", c.Blobs, "value_bytes", c.ValueBytes, "values", c.Values)
	blobs, values := newCorpus(c.Seed, c.BlobBytes, c.Blobs), newCorpus(c.Seed+1, c.ValueBytes, c.Values)
	null, err := startNullHTTP(dirs["null"])
	if err != nil {
		return err
	}
	defer null.close()
	arms := map[string]arm{
		armBlob:  &blobArm{c: hc, dir: filepath.Join(dirs["ours"], "blobs"), buf: make([]byte, copyBuf)},
		armNull:  null,
		armDisk:  &diskArm{dir: dirs["disk"], buf: make([]byte, copyBuf)},
		armRESP:  &respArm{c: ours},
		armRedis: &respArm{c: peer, redis: true},
		armHash:  hashArm{},
	}
	corpora := map[string]*corpus{armBlob: blobs, armNull: blobs, armDisk: blobs, armRESP: values, armRedis: values, armHash: blobs}
	runs := map[string][]passes{}
	refused := ""
	order := []string{armBlob, armNull, armDisk, armRESP, armRedis, armHash}
	err = benchkit.Alternate(ctx, c.Repeats, order, func(ctx context.Context, r int, name string) error {
		a, items := arms[name], corpora[name]
		p, err := measure(ctx, a, items, c.Cold)
		var rf *refusal
		if name == armRESP && errors.As(err, &rf) {
			// Reported as n/a (p is all NaN) with the server's words;
			// the other arms still run.
			if refused == "" {
				log.Warn("our server refused the SET; its RESP figures are n/a", "err", rf.reply)
			}
			refused = rf.reply.Error()
			err = a.clear(ctx, items.len())
		}
		if err != nil {
			return err
		}
		runs[name] = append(runs[name], p)
		log.Info("arm", "repeat", fmt.Sprintf("%d/%d", r+1, c.Repeats), "arm", name, "item_bytes", items.size, "items", items.len(),
			"write_mb_s", round(p.write), "read_mb_s", round(p.read), "cold_read_mb_s", round(p.cold))
		return nil
	})
	if err != nil {
		return err
	}

	rep := &Report{
		Name: "blob", Started: began.UTC().Format(time.RFC3339), Host: benchkit.HostConditions(), Filesystem: fsName, Config: c,
		Conditions: conditions(c, order, fsName, redisVersion),
		Blob: Comparison{
			Ours:      "examples/server PUT and GET /blob/<key> through the Go client (PutBlob of a *bytes.Reader; GetBlob read to its end)",
			Peer:      "the disk under the same directory: new temporary file, 1 MiB writes, fsync, rename, fsync of the directory; read back in 1 MiB reads",
			ItemBytes: c.BlobBytes, Items: c.Blobs, Figures: map[string]*Figure{
				"upload":   newFigure(runs[armBlob], runs[armDisk], func(p passes) float64 { return p.write }),
				"download": newFigure(runs[armBlob], runs[armDisk], func(p passes) float64 { return p.read }),
			},
		},
		Ceiling: Comparison{
			Ours:      "the blob arm, as above",
			Peer:      "a null HTTP server in this process: a PUT's body to the disk as the disk arm writes it, a GET's file sent with sendfile; no hashing, no bookkeeping",
			ItemBytes: c.BlobBytes, Items: c.Blobs, Figures: map[string]*Figure{
				"upload":   newFigure(runs[armBlob], runs[armNull], func(p passes) float64 { return p.write }),
				"download": newFigure(runs[armBlob], runs[armNull], func(p passes) float64 { return p.read }),
			},
		},
		Hash: Comparison{
			Ours:      "SHA-256 of each item in this process, on one core: the digest the blob store computes of every upload",
			Peer:      "the disk arm, as above",
			ItemBytes: c.BlobBytes, Items: c.Blobs, Figures: map[string]*Figure{
				"upload": newFigure(runs[armHash], runs[armDisk], func(p passes) float64 { return p.write }),
			},
		},
		RESP: Comparison{
			Ours:      "examples/server's RESP port, " + strings.Join(respArgs(c), " "),
			Peer:      "redis-server " + redisVersion + " --save '' --appendonly yes --appendfsync " + c.RESPSync,
			ItemBytes: c.ValueBytes, Items: c.Values, OursRefused: refused, Figures: map[string]*Figure{
				"set": newFigure(runs[armRESP], runs[armRedis], func(p passes) float64 { return p.write }),
				"get": newFigure(runs[armRESP], runs[armRedis], func(p passes) float64 { return p.read }),
			},
		},
	}
	if c.Cold {
		rep.Blob.Figures["download_cold"] = newFigure(runs[armBlob], runs[armDisk], func(p passes) float64 { return p.cold })
	}
	rep.Summary = benchkit.Pairs{
		benchkit.NewPair("set64m_vs_redis_ratio", rep.RESP.Figures["set"].Ratio.Median, 2),
		benchkit.NewPair("get64m_vs_redis_ratio", rep.RESP.Figures["get"].Ratio.Median, 2),
		benchkit.NewPair("upload_vs_disk_ratio", rep.Blob.Figures["upload"].Ratio.Median, 2),
		benchkit.NewPair("download_vs_disk_ratio", rep.Blob.Figures["download"].Ratio.Median, 2),
		benchkit.NewPair("upload_vs_null_http_ratio", rep.Ceiling.Figures["upload"].Ratio.Median, 2),
		benchkit.NewPair("download_vs_null_http_ratio", rep.Ceiling.Figures["download"].Ratio.Median, 2),
		benchkit.NewPair("sha256_vs_disk_ratio", rep.Hash.Figures["upload"].Ratio.Median, 2),
	}
	rep.TookSeconds = math.Round(time.Since(began).Seconds()*10) / 10
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Second))
	printTable(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("blob", rep.Summary))
	return nil
}

// respArgs set our server's table to the commit mode paired with
// Redis's fsync policy.
func respArgs(c Config) []string {
	return benchkit.AsyncArgs(c.RESPSync == SyncEverysec, c.SyncInterval)
}

// serverArgs are our server's arguments beyond its addresses and data:
// respArgs, room for the largest blob, and quiet logs.
func serverArgs(c Config) []string {
	args := append(respArgs(c), "--blob-max-size", strconv.Itoa(max(c.BlobBytes, blob.DefaultMaxSize)))
	return append(args, "--log-level", "warn")
}

// measure times one arm's repeat: every item written, then every item
// read back (right after, as a reader soon after an upload finds it), then
// with cold and a coldArm every item read again once its pages were
// dropped. Clearing is not timed.
func measure(ctx context.Context, a arm, items *corpus, cold bool) (passes, error) {
	p := passes{write: math.NaN(), read: math.NaN(), cold: math.NaN()}
	// No arm pays for writing back another's dirty pages.
	unix.Sync()
	pass := func(what string, f func(context.Context, int, []byte, string) error) (float64, error) {
		began := time.Now()
		for i := range items.len() {
			if err := f(ctx, i, items.item(i), items.sums[i]); err != nil {
				return math.NaN(), fmt.Errorf("%s %d: %w", what, i, err)
			}
		}
		return float64(items.bytes()) / 1e6 / time.Since(began).Seconds(), nil
	}
	var err error
	if p.write, err = pass("write", a.write); err != nil {
		return p, err
	}
	if p.read, err = pass("read", a.read); err != nil {
		return p, err
	}
	if ca, ok := a.(coldArm); ok && cold {
		if err := ca.dropCache(); err != nil {
			return p, err
		}
		if p.cold, err = pass("cold read", a.read); err != nil {
			return p, err
		}
	}
	return p, a.clear(ctx, items.len())
}

func newFigure(ours, peer []passes, f func(passes) float64) *Figure {
	o, q := benchkit.Column(ours, f), benchkit.Column(peer, f)
	ratios := benchkit.Ratios(o, q, benchkit.HigherIsBetter)
	fig := &Figure{OursMBps: benchkit.Summarize(o), PeerMBps: benchkit.Summarize(q), Ratio: benchkit.Summarize(ratios)}
	for i := range ratios {
		fig.PerRepeat = append(fig.PerRepeat, RepeatFigure{Ours: benchkit.Float(o[i]), Peer: benchkit.Float(q[i]), Ratio: benchkit.Float(ratios[i])})
	}
	return fig
}

func conditions(c Config, order []string, fsName, redisVersion string) map[string]string {
	dir, _ := filepath.Abs(c.Dir)
	bin := c.Server
	if bin == "" {
		bin = "./examples/server, built by the run"
	}
	cold := "not measured (--cold=false)"
	if c.Cold {
		cold = "download_cold: after the warm read, every file of the arm (the server's <data>/blobs, the disk arm's directory) is dropped from the page cache with posix_fadvise(POSIX_FADV_DONTNEED) (clean pages after fsync, so they go) and every item read again; caches below this machine's page cache (a VM host's) are not dropped"
	}
	return map[string]string{
		"order":        "per repeat: " + strings.Join(order, ", ") + "; sync(2) before each arm, so none writes back another's dirty pages",
		"durability":   "blobs and disk files: fsynced file, rename, fsynced directory before the write returns. RESP: " + respPairing(c),
		"page_cache":   "download and get read every item right after all were written, nothing dropped (as a read soon after an upload); " + cold,
		"content":      "incompressible PCG bytes, every item distinct (cut " + strconv.Itoa(stride) + " bytes apart from one stream)",
		"verification": "every read compared byte for byte with what was written, inside the timed loop (a memcmp); the SHA-256 the server reports for each upload and download compared with the content's",
		"resp_client":  "go-redis v9, one connection, each value SET then, after all, each GET in turn; keys deleted after each repeat (Redis: and any AOF rewrite waited out)",
		"server":       bin,
		"redis":        "redis-server " + redisVersion,
		"dir":          dir,
		"filesystem":   fsName,
		"quick":        strconv.FormatBool(c.Quick),
	}
}

func respPairing(c Config) string {
	if c.RESPSync == SyncAlways {
		return "ours durable (--async=false: a SET returns once fsynced) vs redis-server --appendonly yes --appendfsync always"
	}
	return "ours --async=true --sync-interval " + c.SyncInterval.String() + " (acknowledged once written to the OS, fsynced every interval) vs redis-server --appendonly yes --appendfsync everysec"
}

func round(x float64) any {
	if math.IsNaN(x) {
		return "n/a"
	}
	return math.Round(x)
}

func printTable(w io.Writer, r *Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\titem\tours MB/s\tpeer MB/s\tours/peer\t")
	row := func(name string, cmp Comparison, key string) {
		f := cmp.Figures[key]
		if f == nil {
			return
		}
		fmt.Fprintf(tw, "%s\t%d MiB × %d\t%s\t%s\t%s\t\n", name, cmp.ItemBytes>>20, cmp.Items, spread(f.OursMBps, 0), spread(f.PeerMBps, 0), spread(f.Ratio, 2))
	}
	row("upload vs disk", r.Blob, "upload")
	row("download vs disk", r.Blob, "download")
	row("download (cold) vs disk", r.Blob, "download_cold")
	row("upload vs null HTTP", r.Ceiling, "upload")
	row("download vs null HTTP", r.Ceiling, "download")
	row("SHA-256 alone vs disk", r.Hash, "upload")
	row("SET vs redis", r.RESP, "set")
	row("GET vs redis", r.RESP, "get")
	tw.Flush()
	if r.RESP.OursRefused != "" {
		fmt.Fprintf(w, "our server refused the SET: %s\n", r.RESP.OursRefused)
	}
}

// spread is "median (min–max)", or n/a.
func spread(s benchkit.Summary, digits int) string {
	if math.IsNaN(s.Median) {
		return "n/a"
	}
	return fmt.Sprintf("%s (%s–%s)", benchkit.FormatNumber(s.Median, digits), benchkit.FormatNumber(s.Min, digits), benchkit.FormatNumber(s.Max, digits))
}
