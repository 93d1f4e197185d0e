package wal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// logModel is the obvious in-memory log the real one must agree with.
type logModel struct {
	first uint64
	recs  [][]byte
}

func (m *logModel) last() uint64 { return m.first + uint64(len(m.recs)) - 1 }

// TestRandomOpsMatchModel drives random appends, batches, reads, iterations,
// truncations, resets and reopens against a model, for many seeds and
// option sets.
func TestRandomOpsMatchModel(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			opts := Options{
				SegmentSize:     int64(600 + r.IntN(6000)),
				Sync:            []SyncPolicy{SyncAlways, SyncInterval, SyncNever}[r.IntN(3)],
				Compression:     []Compression{CompressionDefault, CompressionNone, CompressionFast}[r.IntN(3)],
				CompressMinSize: 1 + r.IntN(200),
				FirstIndex:      1 + r.Uint64N(1000),
				NoPreallocate:   r.IntN(2) == 0,
			}
			dir := t.TempDir()
			l, err := Open(dir, opts)
			require.NoError(t, err)
			defer func() { l.Close() }()
			m := &logModel{first: opts.FirstIndex}
			ctx := t.Context()
			rec := func() []byte {
				n := r.IntN(500)
				if r.IntN(3) == 0 {
					return bytes.Repeat([]byte{byte(r.IntN(256))}, n)
				}
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return b
			}
			for step := range 400 {
				op := r.IntN(100)
				switch {
				case op < 45:
					d := rec()
					idx, err := l.Append(ctx, d)
					require.NoError(t, err)
					require.Equal(t, m.last()+1, idx, "step %d", step)
					m.recs = append(m.recs, d)
				case op < 55:
					batch := make([][]byte, r.IntN(6))
					for i := range batch {
						batch[i] = rec()
					}
					idx, err := l.AppendBatch(ctx, batch)
					require.NoError(t, err)
					require.Equal(t, m.last()+1, idx)
					m.recs = append(m.recs, batch...)
				case op < 70:
					i := m.first - min(m.first-1, 2) + r.Uint64N(uint64(len(m.recs))+4)
					got, err := l.Read(i)
					switch {
					case i < m.first:
						require.ErrorIs(t, err, ErrCompacted)
					case i > m.last():
						require.ErrorIs(t, err, ErrNotFound)
					default:
						require.NoError(t, err)
						require.True(t, bytes.Equal(m.recs[i-m.first], got), "index %d", i)
					}
				case op < 76:
					to := m.first + r.Uint64N(uint64(len(m.recs))+1)
					require.NoError(t, l.TruncateFront(ctx, to))
					nf := l.FirstIndex()
					require.GreaterOrEqual(t, nf, m.first)
					require.LessOrEqual(t, nf, max(to, m.first))
					m.recs = m.recs[nf-m.first:]
					m.first = nf
				case op < 83:
					keep := m.first - 1 + r.Uint64N(uint64(len(m.recs))+1)
					require.NoError(t, l.TruncateBack(ctx, keep))
					m.recs = m.recs[:keep+1-m.first]
				case op < 85:
					next := 1 + r.Uint64N(5000)
					require.NoError(t, l.Reset(ctx, next))
					m.first, m.recs = next, nil
				case op < 93:
					require.NoError(t, l.Close())
					l, err = Open(dir, opts)
					require.NoError(t, err)
				default:
					from := m.first + r.Uint64N(uint64(len(m.recs))+1)
					it := l.Iterator(from)
					want := from
					for it.Next() {
						require.Equal(t, want, it.Index())
						require.True(t, bytes.Equal(m.recs[want-m.first], it.Value()))
						want++
					}
					require.NoError(t, it.Err())
					require.Equal(t, m.last()+1, want)
				}
				require.Equal(t, m.first, l.FirstIndex(), "step %d op %d", step, op)
				require.Equal(t, m.last(), l.LastIndex(), "step %d op %d", step, op)
			}
		})
	}
}
