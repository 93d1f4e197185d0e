package benchkit

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// FreeAddrs returns n loopback addresses (127.0.0.1:port) whose ports were
// free when it was called, all distinct: each is held until every one is
// found.
func FreeAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// StartRedis runs redis-server on a free loopback port with its files in
// dir and extra arguments (persistence options), waits until it answers,
// and returns its address and a function that stops it.
func StartRedis(ctx context.Context, dir string, args ...string) (string, func(), error) {
	r, err := StartRedisProcess(ctx, dir, args...)
	return r.Addr, r.Stop, err
}

// ServerProcess is a RESP server running as its own process: a
// redis-server StartRedisProcess started, or an examples/server
// StartServerProcess started.
type ServerProcess struct {
	// Addr is its RESP address.
	Addr string
	// HTTPAddr is an examples/server's HTTP address (/metrics, ...);
	// empty for redis-server.
	HTTPAddr string
	// PID is its process, for ProcessCPU.
	PID  int
	Stop func()
}

// StartRedisProcess is StartRedis that also returns the server's process
// ID.
func StartRedisProcess(ctx context.Context, dir string, args ...string) (ServerProcess, error) {
	return StartRedisProcessOn(ctx, dir, nil, args...)
}

// StartRedisProcessOn is StartRedisProcess with the server bound to cpus
// (none: anywhere).
func StartRedisProcessOn(ctx context.Context, dir string, cpus []int, args ...string) (ServerProcess, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return ServerProcess{}, fmt.Errorf("redis-server is not installed (make deps): %w", err)
	}
	addrs, err := FreeAddrs(1)
	if err != nil {
		return ServerProcess{}, err
	}
	_, port, _ := net.SplitHostPort(addrs[0])
	cmd := OnCPUs(ctx, cpus, bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", dir}, args...)...)
	if err := cmd.Start(); err != nil {
		return ServerProcess{}, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	if err := waitPing(ctx, addrs[0]); err != nil {
		stop()
		return ServerProcess{}, fmt.Errorf("redis-server did not answer: %w", err)
	}
	return ServerProcess{Addr: addrs[0], PID: cmd.Process.Pid, Stop: stop}, nil
}

// waitPing waits, up to about 10 s, until a RESP server answers PING on
// addr.
func waitPing(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for i := 0; ; i++ {
		err := c.Ping(ctx).Err()
		if err == nil || i > 500 {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitHealth waits until GET /health at addr answers 200, about 10 s at
// most.
func waitHealth(ctx context.Context, addr string) error {
	for i := 0; ; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/health: %s", res.Status)
		}
		if i > 500 {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartServerProcess runs bin, examples/server built by BuildExample, as
// its own process on cpus (none: anywhere), with GOMAXPROCS procs when
// above 0, serving RESP and HTTP on free loopback ports (no S3) with its
// data in dir and extra arguments, and waits until it answers. Stop
// interrupts it, as SIGTERM would (it drains and checkpoints), and kills it
// after 10 s.
func StartServerProcess(ctx context.Context, bin, dir string, cpus []int, procs int, args ...string) (ServerProcess, error) {
	a, err := FreeAddrs(2)
	if err != nil {
		return ServerProcess{}, err
	}
	cmd := OnCPUs(ctx, cpus, bin, append([]string{"--data", dir, "--resp", a[0], "--http", a[1], "--s3", ""}, args...)...)
	cmd.Stderr = os.Stderr
	if procs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	}
	if err := cmd.Start(); err != nil {
		return ServerProcess{}, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	if err := waitPing(ctx, a[0]); err != nil {
		stop()
		return ServerProcess{}, fmt.Errorf("examples/server did not answer: %w", err)
	}
	// The HTTP listener opens after RESP's (it sets up the context
	// routes' table first): callers scrape /metrics right away.
	if err := waitHealth(ctx, a[1]); err != nil {
		stop()
		return ServerProcess{}, fmt.Errorf("examples/server's HTTP did not answer: %w", err)
	}
	return ServerProcess{Addr: a[0], HTTPAddr: a[1], PID: cmd.Process.Pid, Stop: stop}, nil
}

// BuildExample builds the repository's example pkg (such as
// "./examples/server") into dir/name and returns the binary's path. The
// examples build in the repository's workspace, whatever this process was
// started with.
func BuildExample(dir, pkg, name string) (string, error) {
	root, err := RepoRoot(".")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// EverysecInterval is the --sync-interval our server's async table runs
// with beside redis-server's appendfsync everysec: the same window of
// acknowledged writes a machine crash may lose, where the server's own
// default (10 ms) keeps a hundredth of it and pays for a hundred times the
// fsyncs.
const EverysecInterval = time.Second

// AsyncArgs are the arguments that make our server's default table async
// with sync interval d, or durable when !async.
func AsyncArgs(async bool, d time.Duration) []string {
	if !async {
		return []string{"--async=false"}
	}
	return []string{"--async=true", "--sync-interval", d.String()}
}

// SyncIntervalOption is the --sync-interval flag of a benchmark whose
// Config has its interval at the field interval returns.
func SyncIntervalOption[C any](interval func(*C) *time.Duration) Option[C] {
	return NewOption[C]("sync-interval", "BENCH_SYNC_INTERVAL", "d", "fsync interval of our async table (default 1s, as Redis's appendfsync everysec; the server's own default is 10ms)", func(c *C, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("sync interval %s: must be above 0", d)
		}
		*interval(c) = d
		return err
	})
}
