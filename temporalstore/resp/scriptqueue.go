package resp

import (
	"context"
	"sync"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// Scripts with keys run one after another on their shard, each inside
// Engine.Atomic. Taking the shard costs a hand-off between goroutines and
// a log write per script, both while the shard is held, and on a busy
// key group that, not the scripts, bounds the rate. So the scripts of a
// key group queue, and whoever finds no one running them runs a batch of
// them, its own among them, inside one Atomic: still one at a time, each
// isolated from every other command, and their writes reach the log as
// one group (one write, one fsync) before any of their callers hears.
// Each caller writes its own reply. The runner stops once its own script
// has run and hands the queue to the next caller waiting.

// maxScriptBatch bounds the scripts one Atomic runs.
const maxScriptBatch = 64

// groupKey names a key group of a table.
type groupKey struct {
	namespace, table string
	group            int
}

// scriptQueue is the scripts of one key group waiting to run.
type scriptQueue struct {
	mu      sync.Mutex
	jobs    []*scriptJob
	running bool
}

// scriptJob is one script waiting in a queue.
type scriptJob struct {
	lockKey []byte
	do      func(tx *temporalstore.Tx)
	// done is signalled once the job ran or its batch failed, or, with
	// lead set, when its caller is to run the queue next (a buffer of one,
	// so that a pooled job's channel serves again).
	done     chan struct{}
	lead     bool
	err      error // the batch's Atomic failed
	panicked any   // do panicked: its caller panics with it
}

// queueFor returns the queue of key group gk.
func (ss *scripts) queueFor(gk groupKey) *scriptQueue {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	q := ss.queues[gk]
	if q == nil {
		q = &scriptQueue{}
		ss.queues[gk] = q
	}
	return q
}

// runQueued runs do on key group gk's shard (taken by lockKey) among the
// group's other scripts, and returns the Atomic's error.
func (c *conn) runQueued(gk groupKey, lockKey []byte, do func(tx *temporalstore.Tx)) error {
	q := c.s.scripts.queueFor(gk)
	job, _ := c.s.scripts.jobs.Get().(*scriptJob)
	if job == nil {
		job = &scriptJob{done: make(chan struct{}, 1)}
	}
	job.lockKey, job.do = lockKey, do
	defer func() {
		*job = scriptJob{done: job.done}
		c.s.scripts.jobs.Put(job)
	}()
	q.mu.Lock()
	q.jobs = append(q.jobs, job)
	waiting := q.running
	q.running = true
	q.mu.Unlock()
	if waiting {
		<-job.done
	}
	if !waiting || job.lead {
		q.drain(c.s, gk, job)
	}
	if p := job.panicked; p != nil {
		panic(p)
	}
	return job.err
}

// drain runs batches of q's jobs until own has run, then hands q to the
// next job waiting, if any.
func (q *scriptQueue) drain(s *Server, gk groupKey, own *scriptJob) {
	var batch []*scriptJob
	for {
		q.mu.Lock()
		n := min(len(q.jobs), maxScriptBatch)
		batch = append(batch[:0], q.jobs[:n]...)
		q.jobs = append(q.jobs[:0], q.jobs[n:]...)
		q.mu.Unlock()
		err := s.opts.Engine.Atomic(context.Background(), gk.namespace, gk.table, batch[0].lockKey, func(tx *temporalstore.Tx) error {
			for _, j := range batch {
				j.run(tx)
			}
			return nil
		})
		ranOwn := false
		for _, j := range batch {
			j.err = err
			if j == own {
				ranOwn = true
			} else {
				j.done <- struct{}{}
			}
		}
		if !ranOwn {
			continue
		}
		q.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
		} else {
			next := q.jobs[0]
			next.lead = true
			next.done <- struct{}{}
		}
		q.mu.Unlock()
		return
	}
}

// run runs the job's script, keeping a panic for its caller.
func (j *scriptJob) run(tx *temporalstore.Tx) {
	defer func() {
		if r := recover(); r != nil {
			j.panicked = r
		}
	}()
	j.do(tx)
}
