package matrixobject

import (
	"context"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// chunkSize is the unit of the streaming write path: bodies are read,
// hashed and written 1 MiB at a time.
const chunkSize = 1 << 20

// pipelineDepth is how many chunks may be in flight between the reader, the
// hashers and the file.
const pipelineDepth = 4

// writebackEvery is how often (in bytes) the write path asks the kernel to
// start writeback, so the disk works while the hashes are computed.
const writebackEvery = 8 << 20

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

// copyHashed copies r to f (from f's current offset 0), feeding every byte to
// each of hs, and fails with ErrTooLarge past limit bytes. Bodies of at least
// one chunk are pipelined: every hash runs in its own goroutine while the
// next chunk is read and the current one is written, and writeback is started
// every few MiB. Smaller bodies are hashed inline.
func (s *Store) copyHashed(ctx context.Context, f *os.File, r io.Reader, limit int64, hs ...hash.Hash) (int64, error) {
	first := s.chunks.get()
	defer s.chunks.put(first)
	n, err := io.ReadFull(r, *first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if int64(n) > limit {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		for _, h := range hs {
			h.Write((*first)[:n])
		}
		_, err := f.Write((*first)[:n])
		return int64(n), err
	case err != nil:
		return 0, err
	}
	return s.pipeline(ctx, f, r, limit, *first, hs)
}

type chunk struct {
	b    []byte
	n    int
	refs atomic.Int32
}

func (s *Store) pipeline(ctx context.Context, f *os.File, r io.Reader, limit int64, first []byte, hs []hash.Hash) (int64, error) {
	free := make(chan *chunk, pipelineDepth)
	var owned []*[]byte
	defer func() {
		for _, b := range owned {
			s.chunks.put(b)
		}
	}()
	release := func(c *chunk) {
		if c.refs.Add(-1) == 0 {
			free <- c
		}
	}
	workers := make([]chan *chunk, len(hs))
	var wg sync.WaitGroup
	for i, h := range hs {
		ch := make(chan *chunk, pipelineDepth)
		workers[i] = ch
		wg.Go(func() {
			for c := range ch {
				h.Write(c.b[:c.n])
				release(c)
			}
		})
	}
	stop := func() {
		for _, ch := range workers {
			close(ch)
		}
		wg.Wait()
	}

	// The first chunk is already full; it is copied into a pipeline buffer
	// so the caller's buffer can go back to the pool.
	allocated := 0
	next := func() *chunk {
		if allocated < pipelineDepth {
			select {
			case c := <-free:
				return c
			default:
			}
			allocated++
			b := s.chunks.get()
			owned = append(owned, b)
			return &chunk{b: *b}
		}
		return <-free
	}
	c := next()
	c.n = copy(c.b, first)
	var total, synced int64
	for {
		if err := ctx.Err(); err != nil {
			stop()
			return total, err
		}
		total += int64(c.n)
		if total > limit {
			stop()
			return total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		c.refs.Store(int32(len(hs) + 1))
		for _, ch := range workers {
			ch <- c
		}
		if _, err := f.Write(c.b[:c.n]); err != nil {
			release(c)
			stop()
			return total, err
		}
		last := c.n < len(c.b)
		release(c)
		if total-synced >= writebackEvery {
			startWriteback(f, synced, total-synced)
			synced = total
		}
		if last {
			break
		}
		c = next()
		n, err := io.ReadFull(r, c.b)
		c.n = n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if n == 0 {
				free <- c
				break
			}
			continue // the loop body handles it as the last chunk
		}
		if err != nil {
			free <- c
			stop()
			return total, err
		}
	}
	stop()
	return total, nil
}
