package feastbare

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// maxBody bounds a request body, as the server's HTTP surface does.
const maxBody = 64 << 20

// Store is the rows: key → field → value, and each row's event time per
// time field (a Feast row holds every view of its entity, each with its own).
type Store struct {
	mu   sync.Mutex
	rows map[string]map[string][]byte
	at   map[string]map[string]time.Time
}

// New returns an empty Store.
func New() *Store {
	return &Store{rows: make(map[string]map[string][]byte), at: make(map[string]map[string]time.Time)}
}

// ServeHTTP serves /batch_execute in MessagePack; anything else is 404.
func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/batch_execute" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req wire.BatchRequest
	if err := wire.Decode(body, true, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	calls := make([]wire.Call, len(req.Commands))
	for i := range req.Commands {
		if err := wire.TranslateInto(&calls[i], &req.Commands[i], req.Namespace, req.TableName, req.Tenant); err != nil {
			http.Error(w, fmt.Sprintf("commands[%d]: %v", i, err), http.StatusBadRequest)
			return
		}
	}
	enc := wire.NewEncoder(true)
	enc.BeginBatch(len(calls))
	for i := range calls {
		res, err := s.run(calls[i].Lend())
		enc.Result(&calls[i], &res, wire.StatusOf(&calls[i], &res, err))
	}
	enc.EndBatch()
	w.Header().Set("Content-Type", "application/msgpack")
	_, _ = w.Write(enc.Bytes())
}

func (s *Store) run(c *api.Command) (api.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.Kind {
	case api.KindRowWriteBatch:
		return s.writeRows(c), nil
	case api.KindRowReadBatch:
		vals := make([][]byte, 0, len(c.Keys)*len(c.Args))
		for _, k := range c.Keys {
			row := s.rows[string(k)]
			for _, f := range c.Args {
				vals = append(vals, row[string(f)])
			}
		}
		return api.Response{Values: vals}, nil
	case api.KindScan:
		var keys [][]byte
		for k := range s.rows {
			if strings.HasSuffix(k, string(c.Suffix)) {
				keys = append(keys, []byte(k))
			}
		}
		return api.Response{Keys: keys}, nil
	case api.KindDeleteKeys:
		n := 0
		for _, k := range c.Keys {
			if _, ok := s.rows[string(k)]; ok {
				delete(s.rows, string(k))
				delete(s.at, string(k))
				n++
			}
		}
		return api.Response{Int: int64(n)}, nil
	}
	return api.Response{}, fmt.Errorf("%w: %s", api.ErrUnknownKind, c.Kind)
}

// writeRows writes each row newer than the one stored, as the engine's
// row_write_batch does, with the event time in c.TSField.
func (s *Store) writeRows(c *api.Command) api.Response {
	field := c.TSField
	if field == "" {
		field = api.DefaultTSField
	}
	ints := make([]int64, len(c.Rows))
	var n int64
	for i, r := range c.Rows {
		k := string(r.Key)
		if at, ok := s.at[k][field]; ok && !r.EventTime.After(at) {
			continue
		}
		row := s.rows[k]
		if row == nil {
			row = make(map[string][]byte, len(r.Args)/2+1)
			s.rows[k] = row
		}
		for j := 0; j+1 < len(r.Args); j += 2 {
			row[string(r.Args[j])] = append([]byte(nil), r.Args[j+1]...)
		}
		row[field] = protoTimestamp(r.EventTime)
		if s.at[k] == nil {
			s.at[k] = make(map[string]time.Time, 1)
		}
		s.at[k][field] = r.EventTime
		ints[i] = 1
		n++
	}
	return api.Response{Ints: ints, Int: n}
}

// protoTimestamp is t as a serialized google.protobuf.Timestamp: field 1
// seconds and field 2 nanos, varints, each left out when zero, as the
// engine keeps it (the epoch itself is empty, not missing).
func protoTimestamp(t time.Time) []byte {
	b := []byte{}
	if sec := t.Unix(); sec != 0 {
		b = binary.AppendUvarint(append(b, 0x08), uint64(sec))
	}
	if ns := t.Nanosecond(); ns != 0 {
		b = binary.AppendUvarint(append(b, 0x10), uint64(ns))
	}
	return b
}

// Command runs the server: `bench feastbare --addr HOST:PORT`.
func Command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("feastbare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "feastbare:", err)
		return 1
	}
	fmt.Fprintln(stdout, "feastbare: listening on", l.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: New(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "feastbare:", err)
		return 1
	}
	return 0
}
