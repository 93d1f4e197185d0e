package flowsbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// SystemCeiling is what the same client, protocol and verbs reach against
// a server that does no more than a queue must: a bare map and slice
// under one lock, each write command appended to a file that is
// fdatasynced before the reply (group commit: one writer goroutine, one
// write and one fdatasync for every command queued meanwhile). No
// leases kept, no histories, no indexes: a ceiling, not a queue.
const SystemCeiling = "ceiling"

func init() {
	register(SystemCeiling, func(cfg Config, log *slog.Logger) system {
		return &ceilingQueue{oursQueue: oursQueue{cfg: cfg, log: log, profiled: nil}}
	})
}

// ceilingQueue drives the bare server with ours' client code.
type ceilingQueue struct {
	oursQueue
	srv *bareServer
}

func (q *ceilingQueue) Name() string { return SystemCeiling }

// Describe goes into the report's conditions.
func (q *ceilingQueue) Describe() string {
	return "a bare RESP server in the benchmark's process, answering FLOW.CREATE_MANY, FLOW.CLAIM_DUE ... RETURN lease, FLOW.COMPLETE_MANY and FLOW.HISTORY in ours' reply shapes from a map and a slice, each write command appended to a file and fdatasynced before its reply (group commit); driven by ours' client code (go-redis, RESP3): the most the client, protocol and disk allow, with no queue behind them"
}

func (q *ceilingQueue) Start(ctx context.Context, dir string) error {
	srv, err := startBareServer(filepath.Join(dir, "log"))
	if err != nil {
		return err
	}
	q.srv = srv
	q.rc = redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: 3, PoolSize: q.cfg.Producers + q.cfg.Workers + 2})
	return q.rc.Ping(ctx).Err()
}

func (q *ceilingQueue) Close() error {
	if q.rc != nil {
		q.rc.Close()
	}
	if q.srv != nil {
		q.srv.close()
	}
	return nil
}

// bareServer is the ceiling's server.
type bareServer struct {
	addr string
	l    net.Listener
	log  *os.File

	mu        sync.Mutex
	payloads  map[string][]byte
	queue     []string
	completes map[string]int
	fencing   int64

	// commits queues the write commands' bytes for the log writer;
	// each is answered on its done channel once fdatasynced.
	commits chan commit
	wg      sync.WaitGroup
}

type commit struct {
	b    []byte
	done chan error
}

func startBareServer(logPath string) (*bareServer, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &bareServer{addr: l.Addr().String(), l: l, log: f, payloads: map[string][]byte{}, completes: map[string]int{},
		commits: make(chan commit, 1024)}
	s.wg.Add(2)
	go s.writer()
	go s.accept()
	return s, nil
}

func (s *bareServer) close() {
	s.l.Close()
	close(s.commits)
	s.wg.Wait()
	s.log.Close()
}

// writer appends and fdatasyncs every queued command in one go.
func (s *bareServer) writer() {
	defer s.wg.Done()
	var buf []byte
	var batch []commit
	for c := range s.commits {
		batch = append(batch[:0], c)
	more:
		for {
			select {
			case c, ok := <-s.commits:
				if !ok {
					break more
				}
				batch = append(batch, c)
			default:
				break more
			}
		}
		buf = buf[:0]
		for _, c := range batch {
			buf = append(buf, c.b...)
		}
		_, err := s.log.Write(buf)
		if err == nil {
			err = fdatasync(s.log)
		}
		for _, c := range batch {
			c.done <- err
		}
	}
}

func (s *bareServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		go s.serve(c)
	}
}

func (s *bareServer) serve(c net.Conn) {
	defer c.Close()
	r, w := bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 64<<10)
	done := make(chan error, 1)
	for {
		args, raw, err := readCommand(r)
		if err != nil {
			return
		}
		verb := strings.ToUpper(string(args[0]))
		if strings.HasPrefix(verb, "FLOW.") && verb != "FLOW.HISTORY" {
			s.commits <- commit{b: raw, done: done}
			if err := <-done; err != nil {
				fmt.Fprintf(w, "-ERR %v\r\n", err)
				w.Flush()
				continue
			}
		}
		s.answer(w, verb, args)
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

// readCommand reads one RESP array of bulk strings and returns it and
// its bytes.
func readCommand(r *bufio.Reader) ([][]byte, []byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, nil, err
	}
	if len(line) < 4 || line[0] != '*' {
		return nil, nil, errors.New("not an array")
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil || n < 1 {
		return nil, nil, errors.New("bad array length")
	}
	raw := append([]byte(nil), line...)
	args := make([][]byte, n)
	for i := range args {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, nil, err
		}
		raw = append(raw, line...)
		size, err := strconv.Atoi(string(line[1 : len(line)-2]))
		if err != nil || line[0] != '$' || size < 0 {
			return nil, nil, errors.New("bad bulk")
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, nil, err
		}
		raw = append(raw, b...)
		args[i] = b[:size]
	}
	return args, raw, nil
}

func bulk(w *bufio.Writer, s string) {
	w.WriteByte('$')
	w.WriteString(strconv.Itoa(len(s)))
	w.WriteString("\r\n")
	w.WriteString(s)
	w.WriteString("\r\n")
}

func respInt(w *bufio.Writer, n int64) {
	w.WriteByte(':')
	w.WriteString(strconv.FormatInt(n, 10))
	w.WriteString("\r\n")
}

func header(w *bufio.Writer, kind byte, n int) {
	w.WriteByte(kind)
	w.WriteString(strconv.Itoa(n))
	w.WriteString("\r\n")
}

// status writes ours' short batch item: id, state, version, fencing.
func status(w *bufio.Writer, id, state string, version, fencing int64) {
	header(w, '%', 4)
	bulk(w, "id")
	bulk(w, id)
	bulk(w, "state")
	bulk(w, state)
	bulk(w, "version")
	respInt(w, version)
	bulk(w, "fencing_token")
	respInt(w, fencing)
}

func (s *bareServer) answer(w *bufio.Writer, verb string, args [][]byte) {
	switch verb {
	case "HELLO":
		header(w, '%', 1)
		bulk(w, "proto")
		respInt(w, 3)
	case "PING":
		w.WriteString("+PONG\r\n")
	case "FLOW.CREATE_MANY":
		var ids []string
		s.mu.Lock()
		for i := 1; i < len(args); i++ {
			if strings.EqualFold(string(args[i]), "ITEM") {
				id := string(args[i+1])
				for j := i + 2; j+1 < len(args) && !strings.EqualFold(string(args[j]), "ITEM"); j += 2 {
					if strings.EqualFold(string(args[j]), "PAYLOAD") {
						s.payloads[id] = args[j+1]
					}
				}
				s.queue = append(s.queue, id)
				ids = append(ids, id)
			}
		}
		s.mu.Unlock()
		header(w, '*', len(ids))
		for _, id := range ids {
			status(w, id, "queued", 1, 0)
		}
	case "FLOW.CLAIM_DUE":
		limit := 1
		for i := 2; i+1 < len(args); i += 2 {
			if strings.EqualFold(string(args[i]), "LIMIT") {
				limit, _ = strconv.Atoi(string(args[i+1]))
			}
		}
		s.mu.Lock()
		k := min(limit, len(s.queue))
		ids := s.queue[:k:k]
		s.queue = s.queue[k:]
		s.fencing++
		fencing := s.fencing
		payloads := make([][]byte, k)
		for i, id := range ids {
			payloads[i] = s.payloads[id]
		}
		s.mu.Unlock()
		header(w, '*', k)
		for i, id := range ids {
			header(w, '%', 6)
			bulk(w, "id")
			bulk(w, id)
			bulk(w, "payload")
			bulk(w, string(payloads[i]))
			bulk(w, "lease_token")
			bulk(w, "w:0:"+strconv.FormatInt(fencing, 10))
			bulk(w, "fencing_token")
			respInt(w, 1)
			bulk(w, "attempts")
			respInt(w, 0)
			bulk(w, "run_state")
			bulk(w, "queued")
		}
	case "FLOW.COMPLETE_MANY":
		var ids []string
		for i := 1; i+1 < len(args); i++ {
			if strings.EqualFold(string(args[i]), "ITEM") {
				ids = append(ids, string(args[i+1]))
			}
		}
		s.mu.Lock()
		for _, id := range ids {
			s.completes[id]++
		}
		s.mu.Unlock()
		header(w, '*', len(ids))
		for _, id := range ids {
			status(w, id, "completed", 3, 1)
		}
	case "FLOW.HISTORY":
		s.mu.Lock()
		n := s.completes[string(args[1])]
		s.mu.Unlock()
		header(w, '*', n)
		for range n {
			header(w, '%', 1)
			bulk(w, "event")
			bulk(w, "completed")
		}
	default:
		// go-redis's connection set-up (CLIENT SETINFO) and the rest.
		w.WriteString("+OK\r\n")
	}
}
