package servertest

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/freeport"
)

// readyTimeout bounds how long Start waits for the "ready" line.
const readyTimeout = 30 * time.Second

// Build compiles the main package in the working directory, which is the
// package's own under go test, to the binary bin.
func Build(bin string) error {
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %w\n%s", err, out)
	}
	return nil
}

// FreeAddr is a loopback address with a port nothing listens on now,
// chosen as freeport.Addr chooses (outside the ephemeral range).
func FreeAddr(t testing.TB) string {
	t.Helper()
	a, err := freeport.Addr()
	require.NoError(t, err)
	return a
}

// Server is a running server process and the log it has written so far.
type Server struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{} // closed once stderr is read to its end
}

// Start runs bin with args and an empty environment, so that no
// variable chooses for the test, and waits for its "ready" log line. It
// fails the test if the server exits or is not ready in time, and kills
// it with the test if it is still running then.
func Start(t testing.TB, bin string, args ...string) *Server {
	t.Helper()
	s := &Server{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	s.cmd.Env = []string{}
	stderr, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.Kill()
		}
	})
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			s.mu.Lock()
			s.buf.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if !once && strings.Contains(sc.Text(), "msg=ready") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-s.done:
		t.Fatalf("server exited before it was ready:\n%s", s.Log())
	case <-time.After(readyTimeout):
		t.Fatalf("server did not become ready:\n%s", s.Log())
	}
	return s
}

// Log is what the server has written to stderr so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Stop sends SIGTERM and waits for the process, after its last log line
// is read: Wait closes the pipe, and lines not yet read would be lost.
func (s *Server) Stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	<-s.done
	return s.cmd.Wait()
}

// Kill sends SIGKILL and waits for the process, as a crash would end it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	_ = s.cmd.Wait()
}
