package soakbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// ErrServerExited is returned when the server process ends before the
// run stops it.
var ErrServerExited = errors.New("soakbench: the server exited during the run")

// ErrNoRSS is returned where /proc has no process status (anything but
// Linux): the soak needs the server's RSS.
var ErrNoRSS = errors.New("soakbench: no /proc/<pid>/status here to read the server's RSS from")

// S3 credentials the server is started with and the load signs with.
const (
	s3AccessKey = "SOAKACCESSKEY01"
	s3Secret    = "soak-secret-key-for-the-soak-run"
)

// server is examples/server running as its own process.
type server struct {
	cmd                   *exec.Cmd
	pid                   int
	respAddr, httpAddr    string
	s3Addr, data, logPath string
	args                  []string
	log                   *os.File
	exited                chan struct{}
	waitErr               error
}

// startServer runs bin on free loopback ports for RESP, HTTP and S3 with
// its data in data and its log in logPath, and waits until all three
// answer. Only the flags the soak needs are set: everything else,
// maintenance included, is the server's default.
func startServer(ctx context.Context, bin, data, logPath string, async bool) (*server, error) {
	a, err := benchkit.FreeAddrs(3)
	if err != nil {
		return nil, err
	}
	s := &server{respAddr: a[0], httpAddr: a[1], s3Addr: a[2], data: data, logPath: logPath, exited: make(chan struct{})}
	s.args = []string{"--data", data, "--resp", a[0], "--http", a[1], "--s3", a[2],
		"--s3-credentials", s3AccessKey + ":" + s3Secret, "--log-level", "warn", "--async=" + strconv.FormatBool(async)}
	if s.log, err = os.Create(logPath); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		s.log.Close()
		return nil, err
	}
	s.pid = s.cmd.Process.Pid
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		_ = s.stop()
		return nil, fmt.Errorf("examples/server did not come up: %w%s", err, s.logTail(10))
	}
	return s, nil
}

// waitReady waits, up to 30 s, until RESP answers PING, HTTP /health
// answers 200 and the S3 port accepts connections.
func (s *server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: s.respAddr, MaxRetries: -1})
	defer c.Close()
	ready := func() error {
		if err := c.Ping(ctx).Err(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.httpAddr+"/health", nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("/health: %s", res.Status)
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.s3Addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%w: %v", ErrServerExited, s.waitErr)
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop interrupts the server, as SIGTERM would (it drains and
// checkpoints), and kills it after 30 s. It returns the exit's error.
func (s *server) stop() error {
	defer s.log.Close()
	select {
	case <-s.exited:
		return s.waitErr
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("the server did not stop within 30 s of an interrupt; killed")
	}
	return s.waitErr
}

// logTail is the last n lines of the server's log, as text to append to
// an error ("" when empty).
func (s *server) logTail(n int) string {
	lines := logLines(s.logPath)
	if len(lines) == 0 {
		return ""
	}
	return "\nserver log:\n" + strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// logLines reads a log file's lines (none when unreadable).
func logLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// rssBytes is process pid's resident memory: VmRSS in /proc/<pid>/status.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat("/proc/self/status"); serr != nil {
			return 0, ErrNoRSS
		}
	}
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(b))
}

// parseVmRSS reads the "VmRSS:  1234 kB" line of a /proc status file.
func parseVmRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("soakbench: malformed VmRSS line %q", strings.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("soakbench: VmRSS %q: %w", f[0], err)
		}
		return kb << 10, nil
	}
	return 0, errors.New("soakbench: no VmRSS line in the process status")
}

// dirBytes is the disk space the files under dir take (allocated
// blocks where the platform says, else their sizes: a preallocated log
// segment counts for what it holds). Files that go away while it walks (a
// compaction's) are skipped.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += diskUsage(fi)
		}
		return nil
	})
	return n
}
