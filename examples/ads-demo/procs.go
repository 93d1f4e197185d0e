package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/examples/internal/freeport"
)

// serverPackage is built when no --server-bin is given.
const serverPackage = "github.com/temporalstore/temporalstore-go/examples/server"

// readyTimeout bounds how long a started server may take to answer PING.
const readyTimeout = 30 * time.Second

// ErrNotReady is returned when a started server exits or does not answer
// in time.
var ErrNotReady = errors.New("ads-demo: server not ready")

// process is a server this program started, its output in a log file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startProcess runs bin with args (on cpus through taskset when cpus is
// not empty), its output in dir/name.log, and waits until addr answers
// PING.
func startProcess(ctx context.Context, dir, name, cpus, addr, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if cpus != "" {
		args = append([]string{"-c", cpus, bin}, args...)
		bin = "taskset"
	}
	p := &process{name: name, cmd: exec.Command(bin, args...), log: logPath, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1})
	defer rc.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		if rc.Ping(ctx).Err() == nil {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%w: %s exited (log %s)", ErrNotReady, name, logPath)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%w: %s did not answer at %s in %s (log %s)", ErrNotReady, name, addr, readyTimeout, logPath)
		}
	}
}

// stop sends SIGTERM and waits for the process, killing it after 15 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// buildServer builds the server into dir and returns the binary's path.
func buildServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "server")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, serverPackage).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the server (or give --resp or --server-bin): %w\n%s", err, out)
	}
	return bin, nil
}

// servers are the stores this program started, and what a report says of
// their setup.
type servers struct {
	procs []*process
	// pids are the started servers' processes by backend.
	pids map[string]int
	// oursHTTP is our server's HTTP address, serving /debug/pprof, when
	// profiling.
	oursHTTP string
}

func (s *servers) stop() {
	for _, p := range s.procs {
		p.stop()
	}
}

// startOurs builds (unless o.ServerBin) and starts our server on a free
// port with a data directory under dir: asynchronous commits unless
// o.Durable.
func (s *servers) startOurs(ctx context.Context, o *Options, dir, cpus string) (string, error) {
	bin := o.ServerBin
	if bin == "" {
		var err error
		if bin, err = buildServer(ctx, dir); err != nil {
			return "", err
		}
	}
	addr, err := freeport.Addr()
	if err != nil {
		return "", err
	}
	if o.ProfileDir != "" {
		if s.oursHTTP, err = freeport.Addr(); err != nil {
			return "", err
		}
	}
	args := []string{"--data", filepath.Join(dir, "data"), "--resp", addr, "--http", s.oursHTTP, "--s3", "", "--log-level", "warn"}
	if !o.Durable {
		args = append(args, "--async")
	}
	if s.oursHTTP != "" {
		args = append(args, "--pprof")
	}
	p, err := startProcess(ctx, dir, "server", cpus, addr, bin, args...)
	if err != nil {
		return "", err
	}
	s.add("ours", p)
	return addr, nil
}

// startRedis starts redis-server on a free port, its files under dir:
// appendonly with appendfsync everysec, or always when o.Durable; no
// snapshots.
func (s *servers) startRedis(ctx context.Context, o *Options, dir, cpus string) (string, error) {
	bin, err := exec.LookPath(o.RedisServer)
	if err != nil {
		return "", fmt.Errorf("redis-server (or give --redis): %w", err)
	}
	addr, err := freeport.Addr()
	if err != nil {
		return "", err
	}
	_, port, _ := net.SplitHostPort(addr)
	fsync := "everysec"
	if o.Durable {
		fsync = "always"
	}
	rdir := filepath.Join(dir, "redis")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return "", err
	}
	p, err := startProcess(ctx, dir, "redis", cpus, addr, bin, "--port", port, "--bind", "127.0.0.1",
		"--dir", rdir, "--save", "", "--appendonly", "yes", "--appendfsync", fsync)
	if err != nil {
		return "", err
	}
	s.add("redis", p)
	return addr, nil
}

// add keeps p, the server of backend: taskset runs it in its own process.
func (s *servers) add(backend string, p *process) {
	s.procs = append(s.procs, p)
	if s.pids == nil {
		s.pids = map[string]int{}
	}
	s.pids[backend] = p.cmd.Process.Pid
}

// cpuList is cpus as taskset writes them: "0,1".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
