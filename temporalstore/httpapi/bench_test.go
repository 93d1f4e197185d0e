package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// discard is a ResponseWriter that keeps nothing: the handler's own cost,
// without a connection's.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// evict is a buffer past this machine's L2 a cold run writes over between
// requests, as other work does on a server idle between requests.
var evict = make([]byte, 8<<20)

// A Feast read of ten entities: one /batch_execute of ten hmgets of eleven
// fields, in MessagePack, as the command plugin sends it; warm, and with
// the caches cold before each request (the time of a served request counts
// the misses of everything it touches).
func BenchmarkBatchFeastRead(b *testing.B) {
	for _, tc := range []struct {
		size int
		cold bool
	}{{2, false}, {1024, false}, {2, true}} {
		size := tc.size
		b.Run(fmt.Sprintf("value=%dB/cold=%v", size, tc.cold), func(b *testing.B) {
			h := benchHandler(b)
			ctx := b.Context()
			fields := make([]Bytes, 11)
			for f := range fields {
				fields[f] = Bytes(fmt.Sprintf("fld%02d", f))
			}
			var req BatchRequest
			for i := range 10 {
				key := []byte(fmt.Sprintf("\x02\x00\x00\x00item%04dbench", i))
				for _, f := range fields {
					_, err := h.opts.Engine.Execute(ctx, ts.Command{Kind: ts.KindHSet, Key: key, Args: [][]byte{f, bytes.Repeat([]byte{'v'}, size)}})
					require.NoError(b, err)
				}
				req.Commands = append(req.Commands, Command{Kind: "hmget", Key: Text(key), Args: fields})
			}
			body := encode(b, true, req)
			rd := bytes.NewReader(body)
			r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/batch_execute", rd)
			require.NoError(b, err)
			r.Header.Set("Content-Type", ContentTypeMsgpack)
			w := &discard{h: http.Header{}}
			for b.Loop() {
				if tc.cold {
					b.StopTimer()
					for i := 0; i < len(evict); i += 64 {
						evict[i]++
					}
					b.StartTimer()
				}
				rd.Reset(body)
				r.Body = io.NopCloser(rd)
				r.ContentLength = int64(len(body))
				h.ServeHTTP(w, r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/command")
		})
	}
}

func benchHandler(b *testing.B) *Handler {
	b.Helper()
	e := newEngine(b, testclock.New(epoch))
	h, err := New(Options{Engine: e})
	require.NoError(b, err)
	return h
}
