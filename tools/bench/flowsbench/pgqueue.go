package flowsbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

func init() {
	register(SystemPostgres, func(cfg Config, _ *slog.Logger) system { return &pgQueue{cfg: cfg} })
}

// pgSchema is the queue: one row a flow, and a partial index that holds
// exactly the due candidates in claim order, so a claim reads the head of
// the index and a claimed flow leaves it.
const pgSchema = `
CREATE TABLE flow_queue (
	id              text PRIMARY KEY,
	state           text NOT NULL DEFAULT 'queued',
	payload         bytea NOT NULL,
	priority        int NOT NULL DEFAULT 0,
	run_at          timestamptz NOT NULL DEFAULT now(),
	lease_owner     text,
	lease_deadline  timestamptz,
	attempts        int NOT NULL DEFAULT 0,
	created_at      timestamptz NOT NULL DEFAULT now(),
	completed_count int NOT NULL DEFAULT 0
);
CREATE INDEX flow_queue_due ON flow_queue (priority DESC, run_at, id) WHERE state = 'queued';
`

// pgClaim takes the due head of the queue for worker $1, at most $2
// flows, under a lease of $3 ms. SKIP LOCKED lets concurrent claims take
// disjoint flows instead of queueing behind each other.
const pgClaim = `
UPDATE flow_queue
SET state = 'running', lease_owner = $1, lease_deadline = now() + $3 * interval '1 millisecond', attempts = attempts + 1
WHERE id IN (
	SELECT id FROM flow_queue
	WHERE state = 'queued' AND run_at <= now()
	ORDER BY priority DESC, run_at, id
	LIMIT $2
	FOR UPDATE SKIP LOCKED)
RETURNING id, payload`

// pgComplete completes the flows $1 still held by lease owner $2: a claim
// that lost its lease (expired, or taken over) completes nothing.
const pgComplete = `
UPDATE flow_queue
SET state = 'completed', completed_count = completed_count + 1
WHERE id = ANY($1) AND state = 'running' AND lease_owner = $2 AND lease_deadline > now()`

// pgVerify counts the flows completed exactly once, more than once, not
// completed, and all.
const pgVerify = `
SELECT count(*) FILTER (WHERE state = 'completed' AND completed_count = 1),
       count(*) FILTER (WHERE completed_count > 1),
       count(*) FILTER (WHERE state <> 'completed'),
       count(*)
FROM flow_queue`

// pgQueue is the postgres peer: a hand-written SKIP LOCKED queue, each
// statement its own (durable) transaction.
type pgQueue struct {
	cfg  Config
	pg   *pgCluster
	pool *pgxpool.Pool
}

func (q *pgQueue) Name() string { return SystemPostgres }

// Start creates a fresh cluster in dir, the queue table, and a pool of a
// connection per producer and worker (and one to spare for Verify).
func (q *pgQueue) Start(ctx context.Context, dir string) error {
	bin, err := findPGBin(q.cfg.PGBin)
	if err != nil {
		return err
	}
	if q.pg, err = startPG(ctx, bin, dir); err != nil {
		return err
	}
	if q.pool, err = q.pg.pool(ctx, q.cfg.Producers+q.cfg.Workers+1); err != nil {
		return err
	}
	if _, err := q.pool.Exec(ctx, pgSchema); err != nil {
		return fmt.Errorf("create the queue table: %w", err)
	}
	return nil
}

// CreateMany inserts items with one multi-row INSERT.
func (q *pgQueue) CreateMany(ctx context.Context, items []item) error {
	var sql strings.Builder
	sql.WriteString("INSERT INTO flow_queue (id, payload) VALUES ")
	args := make([]any, 0, 2*len(items))
	for i, it := range items {
		if i > 0 {
			sql.WriteByte(',')
		}
		sql.WriteString("($" + strconv.Itoa(2*i+1) + ",$" + strconv.Itoa(2*i+2) + ")")
		args = append(args, it.ID, it.Payload)
	}
	tag, err := q.pool.Exec(ctx, sql.String(), args...)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n != int64(len(items)) {
		return fmt.Errorf("inserted %d of %d flows", n, len(items))
	}
	return nil
}

// Claim takes up to limit due flows for worker; the token is the lease
// owner.
func (q *pgQueue) Claim(ctx context.Context, worker string, limit int) ([]claimed, error) {
	rows, err := q.pool.Query(ctx, pgClaim, worker, limit, q.cfg.Lease.Milliseconds())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimed
	for rows.Next() {
		var id string
		var payload []byte
		if err := rows.Scan(&id, &payload); err != nil {
			return nil, err
		}
		out = append(out, claimed{ID: id, Payload: payload, Token: worker})
	}
	return out, rows.Err()
}

// CompleteMany completes cs in one UPDATE per lease owner (one, from a
// worker); a flow no longer held is an error.
func (q *pgQueue) CompleteMany(ctx context.Context, cs []claimed) error {
	byOwner := map[string][]string{}
	for _, c := range cs {
		byOwner[c.Token] = append(byOwner[c.Token], c.ID)
	}
	for owner, ids := range byOwner {
		tag, err := q.pool.Exec(ctx, pgComplete, ids, owner)
		if err != nil {
			return err
		}
		if n := tag.RowsAffected(); n != int64(len(ids)) {
			return fmt.Errorf("completed %d of %d flows leased to %s: the rest were no longer held", n, len(ids), owner)
		}
	}
	return nil
}

// Verify counts from the table.
func (q *pgQueue) Verify(ctx context.Context, n int) (int, error) {
	var once, twice, open, all int
	if err := q.pool.QueryRow(ctx, pgVerify).Scan(&once, &twice, &open, &all); err != nil {
		return 0, err
	}
	return once, checkCounts(n, once, twice, open, all)
}

// checkCounts is the verdict of a system's own counts: n flows, all
// completed, none twice.
func checkCounts(n, once, twice, open, all int) error {
	var errs []error
	if all != n {
		errs = append(errs, fmt.Errorf("%d flows stored, %d created", all, n))
	}
	if twice > 0 {
		errs = append(errs, fmt.Errorf("%d flows completed more than once", twice))
	}
	if open > 0 {
		errs = append(errs, fmt.Errorf("%d flows not completed", open))
	}
	return errors.Join(errs...)
}

// Describe says how the cluster and the queue are set up.
func (q *pgQueue) Describe() string {
	return fmt.Sprintf("%s, a private cluster per run (initdb --locale=C, fsync=on, synchronous_commit=on, defaults otherwise), "+
		"pgx %s pgxpool of %d connections over loopback TCP; one table, partial index (priority DESC, run_at, id) WHERE state='queued'; "+
		"create: one multi-row INSERT per batch; claim: UPDATE ... WHERE id IN (SELECT ... ORDER BY priority DESC, run_at, id LIMIT n FOR UPDATE SKIP LOCKED) RETURNING id; "+
		"complete: UPDATE ... WHERE id = ANY($1) AND state='running' AND lease_owner=$2 AND lease_deadline > now(); each statement its own transaction",
		q.pg.version, moduleVersion("github.com/jackc/pgx/v5"), q.cfg.Producers+q.cfg.Workers+1)
}

// Close closes the pool and stops the cluster.
func (q *pgQueue) Close() error {
	if q.pool != nil {
		q.pool.Close()
	}
	return q.pg.Stop()
}
