package flowsbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// ErrNoPostgres is returned when PostgreSQL's server binaries are not
// found.
var ErrNoPostgres = errors.New("flowsbench: PostgreSQL server binaries (initdb, postgres) not found: install Debian's postgresql package or pass --pg-bin")

// pgDebianBins is where Debian's postgresql-NN packages put the server
// binaries, one directory per major version.
const pgDebianBins = "/usr/lib/postgresql/*/bin"

// Waits of a cluster's life: starting (crash recovery of a fresh cluster
// is nothing, so this is generous) and a fast shutdown.
const (
	pgStartTimeout = 30 * time.Second
	pgStopTimeout  = 30 * time.Second
)

// findPGBin returns the directory of initdb and postgres: dir when given,
// else the newest major version under pgDebianBins, else $PATH's.
func findPGBin(dir string) (string, error) {
	has := func(d string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(d, b)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("%w (looked in --pg-bin %s)", ErrNoPostgres, dir)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob(pgDebianBins)
	major := func(d string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return major(b) - major(a) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", ErrNoPostgres
}

// pgCluster is a private PostgreSQL cluster: its data directory and unix
// socket in one directory, listening on a loopback port, run as a child
// process (as the postgres OS user when this process is root, since
// PostgreSQL refuses to run as root).
type pgCluster struct {
	bin, dir string
	port     int
	version  string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// startPG creates a cluster in dir with initdb and starts it durable:
// fsync=on, synchronous_commit=on, everything else PostgreSQL's defaults.
// Its output goes to dir/postgres.log.
func startPG(ctx context.Context, bin, dir string) (*pgCluster, error) {
	attr, err := pgProcAttr(dir)
	if err != nil {
		return nil, err
	}
	c := &pgCluster{bin: bin, dir: dir}
	ver, err := exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("postgres --version: %w", err)
	}
	c.version = strings.TrimSpace(string(ver))
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--locale=C", "--encoding=UTF8")
	initdb.Dir, initdb.SysProcAttr = dir, attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// A port free when picked may be taken before postgres binds it:
	// try again on another.
	for try := 1; ; try++ {
		err := c.start(ctx, attr)
		if err == nil {
			return c, nil
		}
		if try == 3 || ctx.Err() != nil {
			return nil, err
		}
	}
}

// start runs postgres on a free port and waits until it answers.
func (c *pgCluster) start(ctx context.Context, attr *syscall.SysProcAttr) error {
	addrs, err := benchkit.FreeAddrs(1)
	if err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(addrs[0])
	c.port, _ = strconv.Atoi(port)
	logf, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	// Not CommandContext: the cluster outlives the context of its start,
	// and Stop shuts it down cleanly.
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", filepath.Join(c.dir, "data"), "-p", port, "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=on", "-c", "synchronous_commit=on")
	cmd.Dir, cmd.SysProcAttr, cmd.Stdout, cmd.Stderr = c.dir, attr, logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.exited) }()
	if err := c.waitReady(ctx); err != nil {
		_ = c.Stop()
		return fmt.Errorf("postgres did not start: %w\n%s", err, c.logTail())
	}
	return nil
}

// waitReady connects until the cluster answers, it exits, or
// pgStartTimeout passes.
func (c *pgCluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgStartTimeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.url())
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-c.exited:
			return errors.New("postgres exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// url is the cluster's postgres database over loopback TCP, the same
// path every client of this benchmark takes. Trust authentication: the
// cluster is private to this run and listens on loopback only.
func (c *pgCluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// pool opens a pool of exactly conns connections, all opened now so that
// none is opened inside a measurement.
func (c *pgCluster) pool(ctx context.Context, conns int) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(c.url())
	if err != nil {
		return nil, err
	}
	pc.MaxConns, pc.MinConns = int32(conns), int32(conns)
	p, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	held := make([]*pgxpool.Conn, 0, conns)
	defer func() {
		for _, h := range held {
			h.Release()
		}
	}()
	for range conns {
		h, err := p.Acquire(ctx)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("open connection: %w", err)
		}
		held = append(held, h)
	}
	return p, nil
}

// Stop shuts the cluster down (fast shutdown: SIGINT), killing it when it
// takes longer than pgStopTimeout. Safe to call more than once.
func (c *pgCluster) Stop() error {
	if c == nil || c.cmd == nil {
		return nil
	}
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.exited:
		return nil
	case <-time.After(pgStopTimeout):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("postgres did not stop within %s: killed", pgStopTimeout)
	}
}

// logTail is the end of the cluster's log, for an error.
func (c *pgCluster) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}
