package flowsbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

func init() {
	register(SystemRiver, func(cfg Config, log *slog.Logger) system { return &riverQueue{cfg: cfg, log: log} })
}

// River's fetch settings, as its own throughput benchmark (cmd/river
// bench) sets them: its defaults (100 ms, 1 s) cap a queue at a fetch
// every 100 ms, a tenth of a second's wait for a flow that no producer's
// notification woke a fetch for.
const (
	riverFetchCooldown     = 2 * time.Millisecond
	riverFetchPollInterval = 20 * time.Millisecond
)

// riverStopTimeout bounds the client's graceful stop at Close.
const riverStopTimeout = 30 * time.Second

// flowArgs is a flow as a River job.
type flowArgs struct {
	ID      string `json:"id"`
	Payload []byte `json:"payload"`
}

// Kind implements river.JobArgs.
func (flowArgs) Kind() string { return "flow" }

// flowWorker works a flow: it counts the job and returns.
type flowWorker struct {
	river.WorkerDefaults[flowArgs]
	q *riverQueue
}

// Work counts the job by id (a second count is a double, which Verify
// reports) and tells the harness of the claim. It waits for Consume's
// hooks, which the harness installs as the producers start.
func (w *flowWorker) Work(ctx context.Context, job *river.Job[flowArgs]) error {
	select {
	case <-w.q.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.q.mu.Lock()
	r := w.q.jobs[job.ID]
	if r == nil {
		r = &jobRecord{flow: job.Args.ID}
		w.q.jobs[job.ID] = r
	}
	r.works++
	w.q.mu.Unlock()
	if w.q.hooks.Claimed != nil {
		w.q.hooks.Claimed(job.Args.ID)
	}
	return nil
}

// jobRecord is what the workers saw of one job.
type jobRecord struct {
	flow  string
	works int
}

// riverQueue is the river peer: River's client on a private PostgreSQL
// cluster, working the jobs with its own pool (a consumer).
type riverQueue struct {
	cfg    Config
	log    *slog.Logger
	pg     *pgCluster
	pool   *pgxpool.Pool
	conns  int
	client *river.Client[pgx.Tx]
	events <-chan *river.Event
	unsub  func()
	// cancel ends the context the client was started with.
	cancel context.CancelFunc

	// ready is closed once hooks is set (Consume), or at Close.
	ready     chan struct{}
	readyOnce sync.Once
	hooks     hooks

	mu   sync.Mutex
	jobs map[int64]*jobRecord
}

func (q *riverQueue) Name() string { return SystemRiver }

// Start creates a fresh cluster in dir, runs River's migrations, and
// starts a client working the default queue, idle until jobs arrive.
func (q *riverQueue) Start(ctx context.Context, dir string) error {
	q.ready, q.jobs = make(chan struct{}), map[int64]*jobRecord{}
	bin, err := findPGBin(q.cfg.PGBin)
	if err != nil {
		return err
	}
	if q.pg, err = startPG(ctx, bin, dir); err != nil {
		return err
	}
	// As many connections as the postgres peer has for its producers and
	// workers, and a few for what River runs beside them: its LISTEN
	// connection, fetches, the completer and the leader's maintenance.
	q.conns = q.cfg.Producers + q.cfg.Workers + 4
	if q.pool, err = q.pg.pool(ctx, q.conns); err != nil {
		return err
	}
	driver := riverpgxv5.New(q.pool)
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &flowWorker{q: q})
	q.client, err = river.NewClient(driver, &river.Config{
		FetchCooldown:     riverFetchCooldown,
		FetchPollInterval: riverFetchPollInterval,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: q.cfg.RiverMaxWorkers}},
		Workers:           workers,
		Logger:            slog.New(warnHandler{q.log.Handler()}),
	})
	if err != nil {
		return err
	}
	// Every completion must arrive: a buffer for all of them, since a
	// full one drops events.
	q.events, q.unsub = q.client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: q.cfg.Flows + 1000,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled},
	})
	// The client outlives Start's context; Close stops it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel = cancel
	return q.client.Start(runCtx)
}

// CreateMany inserts items with one InsertMany.
func (q *riverQueue) CreateMany(ctx context.Context, items []item) error {
	ps := make([]river.InsertManyParams, len(items))
	for i, it := range items {
		ps[i] = river.InsertManyParams{Args: flowArgs(it)}
	}
	res, err := q.client.InsertMany(ctx, ps)
	if err != nil {
		return err
	}
	if len(res) != len(items) {
		return fmt.Errorf("inserted %d of %d jobs", len(res), len(items))
	}
	return nil
}

// Consume installs h and reports each completion River's completer
// sends (after it committed) until total arrived. A failed or cancelled
// job is an error: no job here can fail.
func (q *riverQueue) Consume(ctx context.Context, total int, h hooks) error {
	q.readyOnce.Do(func() {
		q.hooks = h
		close(q.ready)
	})
	for done := 0; done < total; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-q.events:
			if !ok {
				return errors.New("river's event subscription closed")
			}
			if ev.Kind != river.EventKindJobCompleted {
				return fmt.Errorf("river job %d: %s (errors %v)", ev.Job.ID, ev.Kind, ev.Job.Errors)
			}
			q.mu.Lock()
			r := q.jobs[ev.Job.ID]
			q.mu.Unlock()
			if r == nil {
				return fmt.Errorf("river completed job %d, which no worker ran", ev.Job.ID)
			}
			h.Completed(r.flow)
			done++
		}
	}
	return nil
}

// Verify counts from river_job and from what the workers saw: a job
// completed exactly once is in state completed after one attempt, and
// was worked once.
func (q *riverQueue) Verify(ctx context.Context, n int) (int, error) {
	rows, err := q.pool.Query(ctx, `SELECT id, state::text, attempt FROM river_job`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	q.mu.Lock()
	defer q.mu.Unlock()
	var once, twice, open, all int
	for rows.Next() {
		var (
			id      int64
			state   string
			attempt int
		)
		if err := rows.Scan(&id, &state, &attempt); err != nil {
			return 0, err
		}
		all++
		works := 0
		if r := q.jobs[id]; r != nil {
			works = r.works
		}
		switch {
		case state != "completed":
			open++
		case attempt > 1 || works > 1:
			twice++
		case works == 1:
			once++
		default:
			open++ // completed without a worker of this run seeing it
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return once, checkCounts(n, once, twice, open, all)
}

// Describe says how River and its cluster are set up.
func (q *riverQueue) Describe() string {
	return fmt.Sprintf("River %s (riverpgxv5, pgx %s) on %s, a private cluster per run as for postgres, migrated with rivermigrate; "+
		"one queue, MaxWorkers %d, FetchCooldown %s and FetchPollInterval %s (River's own benchmark's settings; its defaults are 100ms and 1s), "+
		"its default completer and other defaults; pgxpool of %d connections (producers + workers + 4 for River's LISTEN, fetches, completer and maintenance); "+
		"create: InsertMany per batch; a job's Work counts its id and returns nil; a flow is done at River's JobCompleted event, sent once the completion commits",
		moduleVersion("github.com/riverqueue/river"), moduleVersion("github.com/jackc/pgx/v5"), q.pg.version,
		q.cfg.RiverMaxWorkers, riverFetchCooldown, riverFetchPollInterval, q.conns)
}

// Close stops the client gracefully, then the pool and the cluster.
func (q *riverQueue) Close() error {
	var errs []error
	if q.ready != nil {
		// A run that failed before Consume leaves workers waiting.
		q.readyOnce.Do(func() { close(q.ready) })
	}
	if q.client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), riverStopTimeout)
		if err := q.client.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("stop river: %w", err))
		}
		cancel()
	}
	if q.unsub != nil {
		q.unsub()
	}
	if q.cancel != nil {
		q.cancel()
	}
	if q.pool != nil {
		q.pool.Close()
	}
	errs = append(errs, q.pg.Stop())
	return errors.Join(errs...)
}

// warnHandler passes on warnings and errors only: River's info lines
// (leader elected, queue started) would bury the benchmark's progress.
type warnHandler struct{ slog.Handler }

func (h warnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return warnHandler{h.Handler.WithAttrs(as)}
}

func (h warnHandler) WithGroup(name string) slog.Handler {
	return warnHandler{h.Handler.WithGroup(name)}
}
