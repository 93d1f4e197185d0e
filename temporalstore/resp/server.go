package resp

import (
	"bufio"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// Errors of the server.
var (
	// ErrClosed is returned by Serve after Close.
	ErrClosed = errors.New("resp: server closed")
	// ErrInvalidOptions is returned by New for an option out of range.
	ErrInvalidOptions = errors.New("resp: invalid options")
)

// Saver makes the backups SAVE and BGSAVE ask for.
type Saver interface {
	// Save makes one and returns once it is done.
	Save(ctx context.Context) error
	// BackgroundSave starts one and returns at once; it fails when one is
	// running.
	BackgroundSave() error
	// LastSave is the Unix time of the last one made, 0 before the first.
	LastSave() int64
}

// Options configures a Server.
type Options struct {
	// Engine is the engine served. Nil serves no engine: only the
	// connection's and the server's own verbs (PING, ECHO, AUTH, HELLO,
	// QUIT, RESET, CLIENT, COMMAND, CONFIG, INFO, TIME, SLOWLOG,
	// LATENCY, SELECT 0, MULTI/EXEC/DISCARD) and Commands, every other
	// verb answering "unknown command" as Redis does: a server of
	// another module's verbs alone (a standalone ferricstore). There is
	// one database then, and EXEC runs the queued commands in order,
	// isolated from other connections only as far as the commands
	// themselves are. Default: nil.
	Engine *temporalstore.Engine
	// Namespace and Table are the table the keys of database 0 live in.
	// Default: the engine's default table.
	Namespace, Table string
	// Databases is how many numbered databases SELECT, MOVE, SWAPDB and
	// COPY ... DB address, 0 to Databases-1, as Redis's databases
	// setting. Database n > 0 is the engine table Table@n of Namespace
	// (temporalstore.DatabaseTable), made with Table's options at its
	// first write. Default: DefaultDatabases (16).
	Databases int
	// Tokens are the passwords AUTH accepts for read-write access, and
	// ReadOnlyTokens those for read-only access. Default: none, no AUTH
	// needed.
	Tokens, ReadOnlyTokens []string
	// TenantTokens are passwords AUTH accepts for one tenant, by token:
	// the connection's keys then live in the namespace named as the
	// tenant, its commands carry the tenant (Command.Tenant), and the
	// verbs reaching past the namespace are refused (see TenantToken).
	// Default: none.
	TenantTokens map[string]TenantToken
	// Saver, when set, is what SAVE, BGSAVE and LASTSAVE act on (the
	// server's backups); without it SAVE and BGSAVE checkpoint every
	// shard. Default: nil.
	Saver Saver
	// TLS, when set, makes Serve wrap every connection in TLS.
	TLS *tls.Config
	// MaxBulk is the largest bulk string a request may carry. Default:
	// DefaultMaxBulk (512 MiB, as Redis's proto-max-bulk-len).
	MaxBulk int
	// Logger receives connection errors. Default: slog.Default().
	Logger *slog.Logger
	// Version is what INFO and HELLO report as the server's version.
	// Default: "7.2.0" (clients check it for features).
	Version string
	// SlowlogThreshold is the server time from which a call goes in the
	// slow log (SLOWLOG GET), as Redis's slowlog-log-slower-than.
	// Default: DefaultSlowlogThreshold (10 ms); negative: no slow log.
	SlowlogThreshold time.Duration
	// SlowlogMaxLen is how many slow calls the log keeps, the newest.
	// Default: DefaultSlowlogMaxLen (128); negative: none.
	SlowlogMaxLen int
	// LatencyMonitorThreshold turns on the latency monitor (LATENCY
	// LATEST, HISTORY) for calls taking at least this long, rounded down
	// to whole milliseconds, as Redis's latency-monitor-threshold.
	// Default: 0, off (Redis's default); CONFIG SET changes it.
	LatencyMonitorThreshold time.Duration

	faults faults
	// Commands are verbs added to the built-in ones, served on the same
	// connections (see Command). Default: none.
	Commands []Command
	// Keyspace, when set, is keys the mounted Commands keep in database
	// 0, which the key commands then see too (see Keyspace). Default:
	// none.
	Keyspace Keyspace
	// Publish, when set, publishes keyspace notifications (the pub/sub
	// broker the mounted Commands serve). Default: none, and
	// notify-keyspace-events has no effect.
	Publish func(channel string, message []byte)
	// NotifyKeyspaceEvents is Redis's notify-keyspace-events ("KEA":
	// every event on both channel kinds), which CONFIG SET changes while
	// the server runs. Default: "", none.
	NotifyKeyspaceEvents string
	// Cluster, when set, makes the server a node of a cluster: keyed
	// commands are served only for the hash slots this node leads (or,
	// on a READONLY connection, follows), others answered MOVED, and the
	// CLUSTER verbs describe the cluster (see Cluster). Default: none,
	// a standalone server.
	Cluster Cluster
	// PushLimits bound a connection's queue of pushed frames (see
	// Request.Push), as Redis's client-output-buffer-limit pubsub, which
	// CONFIG SET changes while the server runs. Default:
	// DefaultPushLimits; a negative Hard turns the bounds off; a negative
	// SoftFor is refused.
	PushLimits PushLimits
}

// Server serves RESP connections.
type Server struct {
	opts    Options
	started time.Time
	nextID  atomic.Int64

	mu     sync.Mutex
	conns  map[*conn]struct{}
	lns    []net.Listener
	closed bool
	wg     sync.WaitGroup

	stats    serverStats
	cmdStats *commandStats
	// cmds are the commands served: the built-ins and Options.Commands.
	cmds    commandTable
	slowlog *slowlog
	latency *latencyMonitor
	// blocked holds the connections waiting in a blocking command.
	blocked blockers
	// lastSave is the Unix time of the last checkpoint SAVE or BGSAVE
	// made (the server's start before any); saving is set while BGSAVE
	// runs.
	lastSave atomic.Int64
	saving   atomic.Bool
	// settings are Redis's parameters that are accepted and ignored.
	settings *settings
	// scripts holds the scripts and function libraries, and the scripts
	// running.
	scripts *scripts
	// notify is notify-keyspace-events' classes (notify.go);
	// stopExpired ends the engine's calls of expiredEvents and
	// wroteEvents.
	notify      atomic.Uint32
	stopExpired func()
	// buffers is client-output-buffer-limit (push.go), replaced whole by
	// CONFIG SET under buffersMu.
	buffers   atomic.Pointer[bufferLimits]
	buffersMu sync.Mutex
	// sweeping is set once Serve started the push limits' sweep, which
	// stops when done is closed (Close).
	sweeping bool
	done     chan struct{}
	// releaseTable ends the engine's UseTable of the table served.
	releaseTable func()
}

// faults are functions tests set to raise faults at a layer; nil in use.
type faults struct {
	// parse runs as each request is read; command before each
	// command runs; write before each write to a connection's socket,
	// with the bytes.
	parse   func()
	command func(args [][]byte)
	write   func(p []byte)
}

type serverStats struct {
	connections, commands, errors atomic.Int64
	// panics counts the panics contained while serving requests.
	panics atomic.Int64
	// pushDrops counts the connections closed for their push queue.
	pushDrops atomic.Int64
	// errorCodes counts the error replies by code (INFO errorstats).
	errorCodes errorCodes
}

// New returns a server for opts.
func New(opts Options) (*Server, error) {
	if opts.MaxBulk <= 0 {
		opts.MaxBulk = DefaultMaxBulk
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "7.2.0"
	}
	if opts.SlowlogThreshold == 0 {
		opts.SlowlogThreshold = DefaultSlowlogThreshold
	}
	if opts.SlowlogMaxLen == 0 {
		opts.SlowlogMaxLen = DefaultSlowlogMaxLen
	}
	switch {
	case opts.Databases == 0 && opts.Engine == nil:
		opts.Databases = 1
	case opts.Databases == 0:
		opts.Databases = DefaultDatabases
	case opts.Databases > 1 && opts.Engine == nil:
		return nil, fmt.Errorf("%w: Databases %d without an engine (at most 1)", ErrInvalidOptions, opts.Databases)
	}
	switch {
	case opts.PushLimits == PushLimits{}:
		opts.PushLimits = DefaultPushLimits
	case opts.PushLimits.Hard < 0:
		opts.PushLimits = PushLimits{}
	case opts.PushLimits.SoftFor < 0:
		return nil, fmt.Errorf("%w: negative PushLimits.SoftFor", ErrInvalidOptions)
	}
	if opts.Databases < 0 || opts.Databases > MaxDatabases {
		return nil, fmt.Errorf("%w: Databases %d (1..%d)", ErrInvalidOptions, opts.Databases, MaxDatabases)
	}
	if opts.LatencyMonitorThreshold < 0 {
		return nil, fmt.Errorf("%w: negative LatencyMonitorThreshold", ErrInvalidOptions)
	}
	notify, err := parseNotify(opts.NotifyKeyspaceEvents)
	if err != nil {
		return nil, fmt.Errorf("%w: NotifyKeyspaceEvents: %v", ErrInvalidOptions, err)
	}
	if err := checkTenantTokens(opts); err != nil {
		return nil, err
	}
	cmds, err := extend(opts.Commands, opts.Engine != nil)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, started: time.Now(), conns: map[*conn]struct{}{}, cmds: cmds, cmdStats: newCommandStats(cmds.list),
		slowlog: newSlowlog(opts.SlowlogThreshold, opts.SlowlogMaxLen), latency: newLatencyMonitor(opts.LatencyMonitorThreshold)}
	s.settings = newSettings()
	s.buffers.Store(newBufferLimits(opts.PushLimits))
	s.done = make(chan struct{})
	s.lastSave.Store(s.started.Unix())
	s.scripts = newScripts(s)
	s.notify.Store(notify)
	if opts.Engine != nil {
		// The table served and its databases are not to be dropped.
		s.releaseTable = opts.Engine.UseTable(opts.Namespace, opts.Table)
	}
	if opts.Engine != nil && opts.Publish != nil {
		stopExpired, stopWrites := opts.Engine.OnExpired(s.expiredEvents), opts.Engine.OnWrite(s.wroteEvents)
		s.stopExpired = func() { stopExpired(); stopWrites() }
	}
	return s, nil
}

// Serve accepts connections on l until Close; it returns ErrClosed then.
func (s *Server) Serve(l net.Listener) error {
	if s.opts.TLS != nil {
		l = tls.NewListener(l, s.opts.TLS)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	s.lns = append(s.lns, l)
	if !s.sweeping {
		s.sweeping = true
		s.wg.Add(1)
		go s.sweepPushes()
	}
	s.mu.Unlock()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		c := s.newConn(nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.stats.connections.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops every listener and connection and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.blocked.close()
	if s.stopExpired != nil {
		s.stopExpired()
	}
	if s.releaseTable != nil {
		s.releaseTable()
	}
	for _, l := range s.lns {
		l.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	// A script runs on its connection's goroutine, which a closed
	// socket does not stop.
	s.scripts.stopAll()
	s.wg.Wait()
	return nil
}

// Clients is the number of open connections.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// access is what a connection may do.
type access int

const (
	accessNone access = iota
	accessRead
	accessWrite
)

// authenticate returns what token allows, and the tenant of a tenant
// token ("" for a global one).
func (s *Server) authenticate(token []byte) (access, string) {
	ok := func(list []string) bool {
		found := 0
		for _, t := range list {
			// Every token is compared, so the time taken says nothing
			// about which matched.
			found |= subtle.ConstantTimeCompare([]byte(t), token)
		}
		return found == 1
	}
	var tenant TenantToken
	found := 0
	for tok, tt := range s.opts.TenantTokens {
		if subtle.ConstantTimeCompare([]byte(tok), token) == 1 {
			tenant, found = tt, 1
		}
	}
	switch {
	case ok(s.opts.Tokens):
		return accessWrite, ""
	case ok(s.opts.ReadOnlyTokens):
		return accessRead, ""
	case found == 1 && tenant.ReadOnly:
		return accessRead, tenant.Tenant
	case found == 1:
		return accessWrite, tenant.Tenant
	}
	return accessNone, ""
}

func (s *Server) authRequired() bool {
	return len(s.opts.Tokens)+len(s.opts.ReadOnlyTokens)+len(s.opts.TenantTokens) > 0
}

// conn is one client connection.
type conn struct {
	s      *Server
	nc     net.Conn
	r      *reader
	w      writer
	id     int64
	name   string
	access access
	// tenant is the tenant of the token the connection authenticated
	// with, "" for a global token (tables.go).
	tenant string
	// namespace and table are the engine table the connection's keys
	// live in (the server's, until the connection selects another
	// database). db is the database selected (atomic: CLIENT LIST reads
	// it from other connections); dbReady is set once its table is known
	// to exist, so that a write need not create it (ensureDB).
	namespace, table string
	db               atomic.Int32
	dbReady          bool
	ctx              context.Context
	cancel           context.CancelFunc
	// atomic is the engine transaction the connection's commands run in
	// (EXEC, a script), nil outside one.
	atomic *temporalstore.Tx
	quit   bool
	// bw is the connection's reply buffer (the writer's, unless CLIENT
	// REPLY drops replies); reply is CLIENT REPLY's mode.
	bw    *bufio.Writer
	reply replyMode
	// discard takes the replies CLIENT REPLY drops.
	discard *bufio.Writer
	// parsing is set while a request is being read.
	parsing bool
	since   time.Time
	// last is the last command's name, for CLIENT LIST (which reads it
	// from another connection's goroutine).
	last  atomic.Pointer[string]
	tx    *txState
	watch []watched
	// scratch is a buffer commands read values into before replying;
	// points one window reads put their points in (Command.Into).
	scratch []byte
	points  temporalstore.PointBuffer
	// cmd is the command a hot verb builds and runs in place (command),
	// point1 its one point (onePoint).
	cmd    temporalstore.Command
	point1 [1]temporalstore.Point
	// errReplies counts the error replies of the command running (see
	// runTimed).
	errReplies int
	// lastFailed says the last command runTimed ran replied an error.
	lastFailed bool
	// inExec is set while EXEC runs the queued commands (a blocking
	// command does not block then); blockedFor is the time the running
	// command spent blocked, which is not its own; watchDone ends a
	// blocked command's watch for a disconnect (blocking.go).
	inExec     bool
	blockedFor time.Duration
	watchDone  chan struct{}
	// script is the connection the commands of the connection's scripts
	// run on (scripted).
	script *scriptConn
	// push is the connection's queue of pushed frames (push.go).
	push pushState
	// serving is set on a connection its serve loop runs (not a
	// script's); wakes are the connections whose pushers this one's
	// calls will wake at the end of the run of heldCalls calls of
	// heldSpec (enqueueBy).
	serving   bool
	wakes     []*conn
	heldSpec  *cmdSpec
	heldCalls int
	// readonly is READONLY's mode: in a cluster, reads of the slots this
	// node follows are served here, from its replica. slot is the hash
	// slot of the call running, when it has keys and a cluster routed it.
	readonly bool
	slot     int
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, id: s.nextID.Add(1), since: time.Now(), namespace: s.opts.Namespace, table: s.opts.Table, dbReady: true}
	rd, wr := rawIO(nc)
	c.r = newReader(rd, s.opts.MaxBulk)
	c.w.out = &countWriter{w: wr, fail: s.opts.faults.write}
	c.bw = bufio.NewWriterSize(c.w.out, 16<<10)
	c.w.bw = c.bw
	c.access = accessWrite
	if s.authRequired() {
		c.access = accessNone
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

func (c *conn) serve() {
	defer c.nc.Close()
	defer c.cancel()
	defer c.closePush()
	defer c.unwatch()
	defer c.releaseWakes()
	c.serving = true
	var st serveState
	for !c.quit && c.serveNext(&st) {
	}
}

// serveState is what serveNext keeps from one request to the next.
type serveState struct {
	sets setRun
	gets getRun
	many manyRun
	// A request read while gathering a run, which ended it: it is
	// handled next, after the run's replies.
	pending     [][]byte
	pendingErr  error
	havePending bool
}

// serveNext reads and answers one request (or a pipelined run of them),
// and reports whether the connection goes on. A panic anywhere in it (the
// parser, a command, the reply writer) is contained here: see contain.
func (c *conn) serveNext(st *serveState) (more bool) {
	mark := c.w.produced()
	defer func() {
		if r := recover(); r != nil {
			more = c.contain(r, mark, st)
		}
	}()
	var args [][]byte
	var err error
	if st.havePending {
		args, err, st.havePending = st.pending, st.pendingErr, false
	} else {
		c.parsing = true
		args, err = c.r.next()
		if c.s.opts.faults.parse != nil && err == nil {
			c.s.opts.faults.parse()
		}
		c.parsing = false
	}
	if err != nil {
		if errors.Is(err, ErrProtocol) {
			c.w.err("ERR Protocol error" + strings.TrimPrefix(err.Error(), ErrProtocol.Error()))
			c.w.bw.Flush()
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF) {
			c.s.opts.Logger.Debug("resp: read", "remote", c.nc.RemoteAddr().String(), "err", err)
		}
		c.w.bw.Flush()
		return false
	}
	if len(args) == 0 {
		return true
	}
	c.beginServe()
	defer c.endServe()
	mark = c.w.produced()
	if r := c.runFor(args, st); r != nil && c.r.br.Buffered() > 0 {
		if len(c.wakes) > 0 {
			c.releaseWakes()
		}
		// Pipelined plain SETs, or GETs, already buffered are
		// gathered and run together.
		st.pending, st.havePending, st.pendingErr = c.gather(r, args)
	} else {
		c.s.stats.commands.Add(1)
		if c.reply == replyOn {
			c.dispatch(args)
		} else {
			c.dispatchQuiet(args)
		}
	}
	// Flush once nothing more is buffered: a pipeline's replies go
	// out in one write.
	if !st.havePending && (c.r.br.Buffered() == 0 || c.quit) {
		err := c.flushReplies()
		if len(c.wakes) > 0 {
			c.releaseWakes()
		}
		if err != nil {
			return false
		}
		// No yield here: a yielded connection waits on the
		// scheduler's global queue, where under a saturated load of
		// GETs one in a million calls waited 80–380 ms.
	}
	return true
}

// replyMode is CLIENT REPLY's state.
type replyMode uint8

const (
	replyOn       replyMode = iota
	replyOff                // no reply until CLIENT REPLY ON
	replySkipNext           // the next command's reply is dropped
	replySkipping           // the command running's reply is dropped
)

// dispatchQuiet is dispatch while CLIENT REPLY is OFF or SKIP: the
// command's replies go nowhere. CLIENT REPLY ON answers OK.
func (c *conn) dispatchQuiet(args [][]byte) {
	if c.reply == replySkipNext {
		c.reply = replySkipping
	}
	was := c.reply
	if c.discard == nil {
		c.discard = bufio.NewWriterSize(io.Discard, 512)
	}
	c.w.bw = c.discard
	defer func() { c.w.bw = c.bw }()
	c.dispatch(args)
	c.w.bw = c.bw
	switch {
	case was == replyOff && c.reply == replyOn:
		c.w.ok()
	case c.reply == replySkipping:
		c.reply = replyOn
	}
}

// contain handles a panic raised while serving a request: the stack is
// logged, the panic counted (INFO, respprom), and the client gets an error
// reply. The engine contains its own panics before anything is logged, so
// what gets here is the server's: the connection goes on when no byte of
// the request's reply had been produced, and is closed otherwise (its
// reply stream would be out of step), as it is after a parser's panic.
func (c *conn) contain(r any, mark int64, st *serveState) (more bool) {
	c.s.stats.panics.Add(1)
	c.s.opts.Logger.Error("resp: a request panicked; contained", "remote", c.nc.RemoteAddr().String(),
		"command", c.lastName(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	// A panic may leave a run half gathered, or a transaction half run.
	st.sets, st.gets, st.havePending = setRun{}, getRun{}, false
	c.inExec, c.blockedFor = false, 0
	clean := c.w.produced() == mark && !c.parsing
	// The reply may be what panicked (its write to the socket): a panic
	// while answering closes the connection without another try.
	defer func() {
		if recover() != nil {
			more = false
		}
	}()
	c.errorf("ERR internal error: %v", r)
	return c.w.bw.Flush() == nil && clean
}

// errorf writes an error reply and counts it.
func (c *conn) errorf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	c.s.stats.errors.Add(1)
	c.s.stats.errorCodes.count(msg)
	c.errReplies++
	c.w.err(msg)
}

// executor is what a command runs on: the engine, or a transaction of it.
type executor interface {
	Execute(ctx context.Context, c temporalstore.Command) (temporalstore.Response, error)
	ExecuteInPlace(ctx context.Context, c *temporalstore.Command) (temporalstore.Response, error)
	AppendGet(ctx context.Context, tenant, namespace, name string, key, dst []byte) ([]byte, bool, error)
	KeyVersion(ctx context.Context, namespace, name string, key []byte) (uint64, error)
	Touched(ctx context.Context, w temporalstore.Watch) (bool, error)
	CopyBetween(ctx context.Context, namespace, from, to string, key, dest []byte, replace, move bool) (bool, error)
	Atomic(ctx context.Context, namespace, name string, key []byte, fn func(tx *temporalstore.Tx) error) error
}

// engine is what the connection's commands run on: its transaction inside
// one, the engine otherwise.
func (c *conn) engine() executor {
	if c.atomic != nil {
		return c.atomic
	}
	return c.s.opts.Engine
}
