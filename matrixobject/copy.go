package matrixobject

import (
	"bytes"
	"context"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// chunkSize is the unit in which a body is read from an io.Reader: 1 MiB
// at a time into pooled buffers.
const chunkSize = 1 << 20

// pipelineDepth is how many chunks may be in flight between the reader, the
// hashers and the file.
const pipelineDepth = 4

// writeStep is the largest single write(2) of a body. The write path asks
// the kernel to start writeback after every writeStep bytes, so the device
// works while the hashes are computed.
const writeStep = 8 << 20

// flushEvery is how many bytes of a body may be written but not yet
// flushed before a background fdatasync is started. On a device with a
// volatile write cache the cache flush, not the write, is most of the cost
// of a large fsync, and it grows with the data flushed; flushing while the
// hashes are still being computed leaves the final fsync little more than
// the trailer. Bodies smaller than this never start a background flush, so
// small objects still cost one fsync of the file and one of the directory.
const flushEvery = 8 << 20

// hashStep is how much a hasher hashes between checks for an aborted copy,
// so a cancelled put of a large in-memory body stops promptly.
const hashStep = 1 << 20

// chunkPool recycles the 1 MiB buffers of one Store.
type chunkPool struct{ p sync.Pool }

func (c *chunkPool) get() *[]byte {
	if b, ok := c.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, chunkSize)
	return &b
}

func (c *chunkPool) put(b *[]byte) { c.p.Put(b) }

// inMemory reports the unread length of r when r holds its body in memory
// and its WriteTo passes the whole unread rest to a single Write: such a
// body is hashed and written where it lies, with no copy into chunks.
func inMemory(r io.Reader) (int, bool) {
	switch r := r.(type) {
	case *bytes.Reader:
		return r.Len(), true
	case *bytes.Buffer:
		return r.Len(), true
	}
	return 0, false
}

// copyHashed copies r to f (from f's current offset 0), feeding every byte to
// each of hs, and fails with ErrTooLarge past limit bytes. Bodies smaller
// than one chunk are hashed inline. Larger ones are pipelined: every hash
// runs in its own goroutine while the body is written, writeback is started
// every writeStep bytes, and once the body passes flushEvery a flusher
// goroutine fdatasyncs it whenever flushEvery bytes are unflushed. An
// in-memory body (see inMemory) is not copied at all: the hashers read it in
// place while it is written.
func (s *Store) copyHashed(ctx context.Context, f *os.File, r io.Reader, limit int64, hs ...hash.Hash) (int64, error) {
	if n, ok := inMemory(r); ok && n >= chunkSize {
		if int64(n) > limit {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		p := newPipeline(ctx, f, limit, int64(n), hs)
		w, err := r.(io.WriterTo).WriteTo(p)
		return w, p.close(err)
	}
	first := s.chunks.get()
	n, err := io.ReadFull(r, *first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		defer s.chunks.put(first)
		if int64(n) > limit {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		for _, h := range hs {
			h.Write((*first)[:n])
		}
		_, err := f.Write((*first)[:n])
		return int64(n), err
	case err != nil:
		s.chunks.put(first)
		return 0, err
	}
	p := newPipeline(ctx, f, limit, -1, hs)
	c := &chunks{pool: &s.chunks, free: make(chan *chunk, pipelineDepth)}
	total, err := c.copy(p, r, first)
	err = p.close(err)
	c.release() // the hashers are done with every buffer
	return total, err
}

// pipeline fans a body out to one goroutine per hash and to the file, which
// is written on the caller's goroutine.
type pipeline struct {
	ctx   context.Context
	f     *os.File
	limit int64
	// size is the body's length when it is known in advance (an in-memory
	// body), else -1. Reaching it tells the flusher the body is complete.
	size    int64
	hashers []chan hashJob
	wg      sync.WaitGroup
	// abort tells the hashers to skip the rest of their work after an error.
	abort  atomic.Bool
	total  int64 // bytes written to f
	kicked int64 // writeback has been started for [0, kicked)
	fl     *flusher
}

// hashJob is a slice for one hasher; done is called when it is hashed.
type hashJob struct {
	b    []byte
	done func()
}

func newPipeline(ctx context.Context, f *os.File, limit, size int64, hs []hash.Hash) *pipeline {
	p := &pipeline{ctx: ctx, f: f, limit: limit, size: size}
	for _, h := range hs {
		ch := make(chan hashJob, pipelineDepth)
		p.hashers = append(p.hashers, ch)
		p.wg.Go(func() {
			for j := range ch {
				for b := j.b; len(b) > 0 && !p.abort.Load(); {
					n := min(len(b), hashStep)
					h.Write(b[:n])
					b = b[n:]
				}
				j.done()
			}
		})
	}
	return p
}

// hash queues b to every hasher; each calls done once it is through with b.
func (p *pipeline) hash(b []byte, done func()) {
	for _, ch := range p.hashers {
		ch <- hashJob{b: b, done: done}
	}
}

// write appends b to the file in steps of at most writeStep bytes, checking
// the context before each, starting writeback after each and keeping the
// flusher informed.
func (p *pipeline) write(b []byte) error {
	for len(b) > 0 {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		n, err := p.f.Write(b[:min(len(b), writeStep)])
		p.total += int64(n)
		b = b[n:]
		if err != nil {
			return err
		}
		if p.total-p.kicked >= writeStep {
			startWriteback(p.f, p.kicked, p.total-p.kicked)
			p.kicked = p.total
		}
		p.wrote(p.total == p.size)
	}
	return nil
}

// wrote tells the flusher how far the file has been written, starting it
// once the body has grown past flushEvery; complete says the whole body is
// written, so the flusher may flush the tail while the hashes finish.
func (p *pipeline) wrote(complete bool) {
	if p.fl == nil {
		if p.total < flushEvery {
			return
		}
		p.fl = startFlusher(p.f)
	}
	p.fl.note(p.total, complete)
}

// Write hashes and writes b: the hashers read b in place while it is
// written, and Write returns only when they are done with it. It is the
// io.Writer an in-memory body's WriteTo writes to.
func (p *pipeline) Write(b []byte) (int, error) {
	if int64(len(b)) > p.limit-p.total {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, p.limit)
	}
	var hashed sync.WaitGroup
	hashed.Add(len(p.hashers))
	p.hash(b, hashed.Done)
	start := p.total
	err := p.write(b)
	if err != nil {
		p.abort.Store(true)
	}
	hashed.Wait()
	return int(p.total - start), err
}

// close stops the hashers (at once if err is set) and the flusher, waits
// for both, and returns err or else the flusher's error.
func (p *pipeline) close(err error) error {
	if err != nil {
		p.abort.Store(true)
	}
	for _, ch := range p.hashers {
		close(ch)
	}
	p.wg.Wait()
	if p.fl != nil {
		if ferr := p.fl.stop(); err == nil {
			err = ferr
		}
	}
	return err
}

// chunk is one pooled buffer of a body read from an io.Reader.
type chunk struct {
	buf  *[]byte
	n    int
	refs atomic.Int32 // hashers still reading it
	free chan<- *chunk
}

func (c *chunk) done() {
	if c.refs.Add(-1) == 0 {
		c.free <- c
	}
}

// chunks is the set of at most pipelineDepth buffers that carry a body from
// an io.Reader through a pipeline.
type chunks struct {
	pool  *chunkPool
	free  chan *chunk
	owned []*[]byte
}

// next returns a buffer to read into: a new one while fewer than
// pipelineDepth exist, else the next one the hashers give back.
func (cs *chunks) next() *chunk {
	if len(cs.owned) < pipelineDepth {
		select {
		case c := <-cs.free:
			return c
		default:
		}
		return cs.add(cs.pool.get())
	}
	return <-cs.free
}

func (cs *chunks) add(b *[]byte) *chunk {
	cs.owned = append(cs.owned, b)
	return &chunk{buf: b, free: cs.free}
}

// release returns every buffer to the pool; the pipeline must be closed.
func (cs *chunks) release() {
	for _, b := range cs.owned {
		cs.pool.put(b)
	}
}

// copy reads r to EOF through the pipeline; first is a full chunk already
// read from r, and becomes one of the pipeline's buffers.
func (cs *chunks) copy(p *pipeline, r io.Reader, first *[]byte) (int64, error) {
	c := cs.add(first)
	c.n = len(*first)
	for {
		if int64(c.n) > p.limit-p.total {
			return p.total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, p.limit)
		}
		last := c.n < len(*c.buf)
		b := (*c.buf)[:c.n]
		c.refs.Store(int32(len(p.hashers)))
		p.hash(b, c.done)
		if err := p.write(b); err != nil {
			return p.total, err
		}
		if last {
			return p.total, nil
		}
		c = cs.next()
		n, err := io.ReadFull(r, *c.buf)
		c.n = n
		switch {
		case n == 0 && err == io.EOF:
			cs.free <- c
			return p.total, nil
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			// A short chunk: the next iteration handles it as the last.
		case err != nil:
			cs.free <- c
			return p.total, err
		}
	}
}

// flusher fdatasyncs a file that is being written, from its own goroutine:
// whenever flushEvery bytes have been written since its last flush, and once
// more for the tail when the body is known to be complete (an in-memory
// body, whose writes end well before its hashes). fdatasync writes and
// flushes everything written so far, so each flush covers what piled up
// during the previous one.
type flusher struct {
	f       *os.File
	written atomic.Int64
	// flushed is how much of the file the last flush covered.
	flushed  atomic.Int64
	complete atomic.Bool
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	// err is the first failed flush; it is read after done is closed. It
	// must reach the caller: the kernel reports a writeback error to one
	// fsync of the file only, and this one may be it.
	err error
}

func startFlusher(f *os.File) *flusher {
	fl := &flusher{f: f, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go fl.run()
	return fl
}

// note records that the file holds written bytes (all of the body when
// complete) and wakes the flusher without waiting for it.
func (fl *flusher) note(written int64, complete bool) {
	fl.written.Store(written)
	if complete {
		fl.complete.Store(true)
	}
	select {
	case fl.wake <- struct{}{}:
	default:
	}
}

func (fl *flusher) run() {
	defer close(fl.done)
	for {
		select {
		case <-fl.quit:
			return
		case <-fl.wake:
		}
		select {
		case <-fl.quit:
			return
		default:
		}
		w, flushed := fl.written.Load(), fl.flushed.Load()
		if w-flushed < flushEvery && (w == flushed || !fl.complete.Load()) {
			continue
		}
		if err := fdatasync(fl.f); err != nil {
			fl.err = err
			return
		}
		fl.flushed.Store(w)
	}
}

// stop waits for a flush in progress, ends the flusher and returns its
// error.
func (fl *flusher) stop() error {
	close(fl.quit)
	<-fl.done
	return fl.err
}
