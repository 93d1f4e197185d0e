package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/temporalstore/temporalstore-go/examples/raft-kv/kvwire"
	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/tcptransport"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "raft-kv:", err)
		os.Exit(1)
	}
}

// config is the parsed flags.
type config struct {
	id              uint64
	peers           []matrixraft.Peer
	httpAddr        string
	httpPeers       map[uint64]string
	kvAddr          string
	dataDir         string
	tick            time.Duration
	electionTicks   int
	snapshotEntries uint64
	catchUpEntries  uint64
	requestTimeout  time.Duration
	logLevel        slog.Level
}

// parseIDMap parses "1=host:port,2=host:port".
func parseIDMap(s string) (map[uint64]string, error) {
	out := map[uint64]string{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		idStr, addr, ok := strings.Cut(part, "=")
		id, err := strconv.ParseUint(idStr, 10, 64)
		if !ok || err != nil || id == 0 || addr == "" {
			return nil, fmt.Errorf("%q: want ID=host:port with a non-zero ID", part)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("ID %d listed twice", id)
		}
		out[id] = addr
	}
	return out, nil
}

// parseFlags parses args. --help prints the usage to stderr and returns
// flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var peers, httpPeers, level string
	fs := flag.NewFlagSet("raft-kv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&c.id, "id", 0, "this node's raft ID: non-zero, one of the IDs in --peers (required)")
	fs.StringVar(&peers, "peers", "", "every member's raft address, this node's included, as ID=host:port,...; this node listens on its own entry. Used to bootstrap a new cluster; a restart takes the membership from --data (required)")
	fs.StringVar(&c.httpAddr, "http", "", "address of this node's HTTP API, host:port (required)")
	fs.StringVar(&httpPeers, "http-peers", "", "every member's HTTP address as ID=host:port,...; when set, a write sent to a follower is redirected (307) to the leader's HTTP address; without it the follower answers 503 naming the leader's ID")
	fs.StringVar(&c.kvAddr, "kv", "", "address of this node's binary protocol (package kvwire: many requests in flight per connection), host:port; off when empty")
	fs.StringVar(&c.dataDir, "data", "", "directory of this node's raft log and snapshots, created if missing; restart with the same directory to resume (required)")
	fs.DurationVar(&c.tick, "tick", matrixraft.DefaultTickInterval, "raft tick; heartbeats go every tick")
	fs.IntVar(&c.electionTicks, "election-ticks", matrixraft.DefaultElectionTick, "ticks without a leader before a follower campaigns (randomized up to twice this)")
	fs.Uint64Var(&c.snapshotEntries, "snapshot-entries", matrixraft.DefaultSnapshotEntries, "applied entries between two snapshots of the store; the log before a snapshot is dropped")
	fs.Uint64Var(&c.catchUpEntries, "catchup-entries", matrixraft.DefaultCatchUpEntries, "entries kept before a snapshot for followers that lag; one lagging further gets the snapshot")
	fs.DurationVar(&c.requestTimeout, "request-timeout", 5*time.Second, "how long one HTTP request may wait for raft before it fails (504)")
	fs.StringVar(&level, "log-level", "info", "log level: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: raft-kv --id N --peers 1=HOST:PORT,... --http HOST:PORT --data DIR [flags]

A replicated key-value store: one process per member of a matrixraft
cluster, raft over TCP, an HTTP API per process.

  PUT /kv/{key}          body = value; returns 204 once the write is applied
                         on this node (it must be the leader: a follower
                         answers 307 to the leader with --http-peers, else
                         503 with the leader's ID in X-Raft-Leader)
  GET /kv/{key}          linearizable read (ReadIndex), on any member
  GET /kv/{key}?stale=1  this member's local value, possibly behind
  GET /status            this node's raft status and transport counters, JSON

With --kv, the same puts and gets are served in the binary protocol of
package kvwire, many requests in flight on one connection.

Logs go to stderr (log/slog).

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := c.logLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fmt.Errorf("--log-level: %w", err)
	}
	pm, err := parseIDMap(peers)
	if err != nil {
		return c, fmt.Errorf("--peers: %w", err)
	}
	for _, id := range slices.Sorted(maps.Keys(pm)) {
		c.peers = append(c.peers, matrixraft.Peer{ID: id, Addr: pm[id]})
	}
	if c.httpPeers, err = parseIDMap(httpPeers); err != nil {
		return c, fmt.Errorf("--http-peers: %w", err)
	}
	switch {
	case c.id == 0:
		return c, errors.New("--id is required and must be non-zero")
	case pm[c.id] == "":
		return c, fmt.Errorf("--peers must list this node's ID %d", c.id)
	case c.httpAddr == "":
		return c, errors.New("--http is required")
	case c.dataDir == "":
		return c, errors.New("--data is required")
	case c.tick <= 0 || c.requestTimeout <= 0:
		return c, errors.New("--tick and --request-timeout must be positive")
	case c.electionTicks < 2:
		return c, errors.New("--election-ticks must be at least 2")
	}
	return c, nil
}

// run starts the node and the HTTP API and serves until ctx ends, then
// stops both.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	base := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: c.logLevel}))
	log := base.With("node", c.id)
	if err := os.MkdirAll(c.dataDir, 0o755); err != nil {
		return err
	}
	var raftAddr string
	for _, p := range c.peers {
		if p.ID == c.id {
			raftAddr = p.Addr
		}
	}
	tr, err := tcptransport.New(tcptransport.Options{ID: c.id, ListenAddr: raftAddr, Logger: base})
	if err != nil {
		return err
	}
	st := newStore()
	node, err := matrixraft.StartNode(matrixraft.Options{
		ID:              c.id,
		Dir:             c.dataDir,
		Peers:           c.peers,
		StateMachine:    st,
		Transport:       tr,
		TickInterval:    c.tick,
		ElectionTick:    c.electionTicks,
		SnapshotEntries: c.snapshotEntries,
		CatchUpEntries:  c.catchUpEntries,
		Logger:          log,
	})
	if err != nil {
		tr.Close()
		return err
	}
	defer node.Stop()

	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		return err
	}
	a := &api{node: node, tr: tr, st: st, cfg: c, log: log}
	srv := &http.Server{
		Handler:           a.routes(),
		ReadHeaderTimeout: 5 * time.Second,
	}
	errc := make(chan error, 2)
	kvAddr := ""
	if c.kvAddr != "" {
		kvLn, err := net.Listen("tcp", c.kvAddr)
		if err != nil {
			ln.Close()
			return err
		}
		kvAddr = kvLn.Addr().String()
		kv := kvwire.NewServer(a.serveWire, kvwire.ServerOptions{Logger: log})
		defer kv.Close()
		go func() {
			if err := kv.Serve(kvLn); !errors.Is(err, kvwire.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	log.Info("raft-kv started", "raft", raftAddr, "http", ln.Addr().String(), "kv", kvAddr, "data", c.dataDir)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		log.Info("raft-kv stopping")
	case <-node.Done():
		err = node.Err()
		log.Error("raft node stopped", "err", err)
	case err = <-errc:
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	return err
}

// api serves one node's HTTP interface and its kvwire requests.
type api struct {
	node *matrixraft.Node
	tr   *tcptransport.Transport
	st   *store
	cfg  config
	log  *slog.Logger
}

// maxValueSize bounds a PUT body: well under raft's message size.
const maxValueSize = 512 << 10

// routes is the HTTP interface.
func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /kv/{key}", a.put)
	mux.HandleFunc("GET /kv/{key}", a.get)
	mux.HandleFunc("GET /status", a.status)
	return mux
}

func (a *api) put(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	value, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxValueSize))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if err := a.write(r.Context(), key, value); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// write puts key = value through raft and returns once it is applied
// here, or fails after the request timeout.
func (a *api) write(ctx context.Context, key string, value []byte) error {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.requestTimeout)
	defer cancel()
	_, err := a.node.Propose(ctx, encodePut(key, value))
	return err
}

// read returns key's value once a read in mode may see it.
func (a *api) read(ctx context.Context, key string, mode matrixraft.ReadMode) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.requestTimeout)
	defer cancel()
	if err := a.node.Read(ctx, mode); err != nil {
		return nil, false, err
	}
	v, ok := a.st.get(key)
	return v, ok, nil
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	mode := matrixraft.ReadLinearizable
	if s := r.URL.Query().Get("stale"); s == "1" || s == "true" {
		mode = matrixraft.ReadStale
	}
	v, ok, err := a.read(r.Context(), r.PathValue("key"), mode)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !ok {
		http.Error(w, "no such key", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(v)
}

// statusReply is GET /status.
type statusReply struct {
	Node      matrixraft.Status  `json:"node"`
	Transport tcptransport.Stats `json:"transport"`
}

func (a *api) status(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(statusReply{Node: a.node.Status(), Transport: a.tr.Stats()})
}

// fail maps a raft error to an HTTP answer. A write that is not on the
// leader is redirected when the leader's HTTP address is known; every
// answer about leadership carries the leader's ID (0: none known).
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	var nl *matrixraft.NotLeaderError
	switch {
	case errors.As(err, &nl):
		w.Header().Set("X-Raft-Leader", strconv.FormatUint(nl.Leader, 10))
		if addr := a.cfg.httpPeers[nl.Leader]; addr != "" && nl.Leader != 0 {
			http.Redirect(w, r, "http://"+addr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case errors.Is(err, context.DeadlineExceeded):
		// For a write the outcome is unknown: it may still be applied.
		http.Error(w, "timed out; a write may or may not have been applied", http.StatusGatewayTimeout)
	case errors.Is(err, matrixraft.ErrProposalDropped), errors.Is(err, matrixraft.ErrStopped):
		w.Header().Set("X-Raft-Leader", strconv.FormatUint(a.node.Leader(), 10))
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case errors.Is(err, context.Canceled):
		// The client went away.
	default:
		a.log.Warn("request failed", "path", r.URL.Path, "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// serveWire is the kvwire handler: PUT and GET's meaning, with the same
// timeouts and failures.
func (a *api) serveWire(ctx context.Context, req kvwire.Request) (kvwire.Status, []byte) {
	if req.Op == kvwire.OpPut {
		if len(req.Value) > maxValueSize {
			return kvwire.StatusBadRequest, []byte("value over 512 KiB")
		}
		if err := a.write(ctx, req.Key, req.Value); err != nil {
			return wireStatus(err)
		}
		return kvwire.StatusOK, nil
	}
	mode := matrixraft.ReadLinearizable
	if req.Op == kvwire.OpStaleGet {
		mode = matrixraft.ReadStale
	}
	v, ok, err := a.read(ctx, req.Key, mode)
	switch {
	case err != nil:
		return wireStatus(err)
	case !ok:
		return kvwire.StatusNotFound, nil
	}
	return kvwire.StatusOK, v
}

// wireStatus is fail's mapping for kvwire.
func wireStatus(err error) (kvwire.Status, []byte) {
	var nl *matrixraft.NotLeaderError
	switch {
	case errors.As(err, &nl):
		return kvwire.StatusNotLeader, binary.AppendUvarint(nil, nl.Leader)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kvwire.StatusUnknown, nil
	case errors.Is(err, matrixraft.ErrProposalDropped), errors.Is(err, matrixraft.ErrStopped):
		return kvwire.StatusUnavailable, []byte(err.Error())
	default:
		return kvwire.StatusError, []byte(err.Error())
	}
}
