package clusterbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// startTimeout bounds a member's start (until it logs msg=ready) and the
// cluster's until every slot has a leader.
const startTimeout = 30 * time.Second

// oursCluster is three examples/server processes on loopback, each a
// member of one cluster: every shard of the default table a raft group
// with a voter on each.
type oursCluster struct {
	members []*member
}

// member is one server process.
type member struct {
	id   int
	resp string // RESP address, as CLUSTER SHARDS gives it
	cmd  *exec.Cmd
	log  *logSink
	// exited is closed once the process was waited for.
	exited chan struct{}
}

// startOurs starts three members of bin with their data under dir, the
// default table in shards shards, and the extra flags, and waits until
// each serves and every slot has a leader. Every process ends with ctx.
func startOurs(ctx context.Context, bin, dir string, shards int, extra ...string) (*oursCluster, error) {
	// One call: two would each close their listeners before the next, and
	// could hand out the same port twice.
	addrs, err := benchkit.FreeAddrs(6)
	if err != nil {
		return nil, err
	}
	raft, resp := addrs[:3], addrs[3:]
	var peers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("%d@%s@%s", i+1, raft[i], resp[i]))
	}
	c := &oursCluster{}
	for i := range 3 {
		m := &member{id: i + 1, resp: resp[i], log: newLogSink(), exited: make(chan struct{})}
		// Durable (--async=false, the default, said for the record): a
		// SET is acknowledged once a quorum fsynced its raft entry and
		// the leader applied it.
		m.cmd = exec.CommandContext(ctx, bin, append([]string{"--data", filepath.Join(dir, fmt.Sprint("member-", m.id)), "--resp", m.resp,
			"--http", "", "--s3", "", "--shards", strconv.Itoa(shards), "--async=false",
			"--cluster-id", strconv.Itoa(m.id), "--cluster-peers", strings.Join(peers, ",")}, extra...)...)
		m.cmd.Stdout, m.cmd.Stderr = io.Discard, m.log
		if err := m.cmd.Start(); err != nil {
			c.Close()
			return nil, fmt.Errorf("start member %d: %w", m.id, err)
		}
		go func() {
			_ = m.cmd.Wait()
			close(m.exited)
		}()
		c.members = append(c.members, m)
	}
	deadline := time.After(startTimeout)
	for _, m := range c.members {
		select {
		case <-m.log.ready:
		case <-m.exited:
			c.Close()
			return nil, fmt.Errorf("member %d exited before it was ready:\n%s", m.id, m.log.Tail())
		case <-deadline:
			c.Close()
			return nil, fmt.Errorf("member %d not ready within %s:\n%s", m.id, startTimeout, m.log.Tail())
		case <-ctx.Done():
			c.Close()
			return nil, ctx.Err()
		}
	}
	if err := c.waitServed(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Addrs returns the members' RESP addresses.
func (c *oursCluster) Addrs() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.resp)
	}
	return out
}

// PIDs returns the processes of the members still running.
func (c *oursCluster) PIDs() []int {
	var out []int
	for _, m := range c.members {
		if !m.dead() {
			out = append(out, m.cmd.Process.Pid)
		}
	}
	return out
}

func (m *member) dead() bool {
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// memberAt returns the member serving RESP at addr, or nil.
func (c *oursCluster) memberAt(addr string) *member {
	for _, m := range c.members {
		if m.resp == addr {
			return m
		}
	}
	return nil
}

// shards asks member m for CLUSTER SHARDS.
func (m *member) shards(ctx context.Context) ([]redis.ClusterShard, error) {
	rc := redis.NewClient(&redis.Options{Addr: m.resp, PoolSize: 1, MaxRetries: -1})
	defer rc.Close()
	return rc.ClusterShards(ctx).Result()
}

// waitServed waits until every member reports every slot led.
func (c *oursCluster) waitServed(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	for _, m := range c.members {
		for {
			shards, err := m.shards(ctx)
			_, led := ledSlots(shards)
			if err == nil && led == temporalstore.HashSlots {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("member %d: %d of %d slots led %s after start (%v):\n%s", m.id, led, temporalstore.HashSlots, startTimeout, err, m.log.Tail())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// Kill sends m SIGKILL and waits for it to exit.
func (m *member) Kill() {
	_ = m.cmd.Process.Kill()
	<-m.exited
}

// Close stops the members still running with SIGTERM, as an operator
// would, and kills those still there after 10 s. It reports the members
// that had to be killed.
func (c *oursCluster) Close() error {
	var errs []error
	for _, m := range c.members {
		if !m.dead() {
			_ = m.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	timeout := time.After(10 * time.Second)
	for _, m := range c.members {
		select {
		case <-m.exited:
		case <-timeout:
			m.Kill()
			errs = append(errs, fmt.Errorf("member %d did not stop within 10s of SIGTERM", m.id))
		}
	}
	return errors.Join(errs...)
}

// LogCounts returns the members' WARN and ERROR log lines so far, counted
// by "member level msg".
func (c *oursCluster) LogCounts() map[string]int {
	out := map[string]int{}
	for _, m := range c.members {
		for k, n := range m.log.Counts() {
			out[fmt.Sprintf("member %d %s", m.id, k)] += n
		}
	}
	return out
}

// logSink takes a member's stderr (slog text lines): it notes the ready
// line, counts WARN and ERROR lines by message and keeps the last lines.
type logSink struct {
	mu      sync.Mutex
	partial []byte
	ready   chan struct{}
	isReady bool
	counts  map[string]int
	tail    []string
}

const tailLines = 40

func newLogSink() *logSink {
	return &logSink{ready: make(chan struct{}), counts: map[string]int{}}
}

// Write implements io.Writer.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	return len(p), nil
}

func (s *logSink) line(l string) {
	s.tail = append(s.tail, l)
	if len(s.tail) > tailLines {
		s.tail = s.tail[len(s.tail)-tailLines:]
	}
	level, msg := levelAndMsg(l)
	if !s.isReady && msg == "ready" {
		s.isReady = true
		close(s.ready)
	}
	if level == "WARN" || level == "ERROR" {
		s.counts[level+" "+msg]++
	}
}

// Counts returns the WARN and ERROR lines so far by "level msg".
func (s *logSink) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.counts)
}

// Tail returns the last lines.
func (s *logSink) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// levelAndMsg reads the level and msg fields of a slog text (logfmt)
// line; a quoted value is unquoted.
func levelAndMsg(line string) (level, msg string) {
	field := func(key string) string {
		var v string
		if rest, ok := strings.CutPrefix(line, key+"="); ok {
			v = rest
		} else if i := strings.Index(line, " "+key+"="); i >= 0 {
			v = line[i+len(key)+2:]
		} else {
			return ""
		}
		if strings.HasPrefix(v, `"`) {
			if q, err := strconv.QuotedPrefix(v); err == nil {
				u, _ := strconv.Unquote(q)
				return u
			}
			return strings.Trim(v, `"`)
		}
		if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		return v
	}
	return field("level"), field("msg")
}

// leaders is how many slots each member leads, by "member N".
func (c *oursCluster) leaders(ctx context.Context) (map[string]int, error) {
	shards, err := c.members[0].shards(ctx)
	if err != nil {
		return nil, err
	}
	led, _ := ledSlots(shards)
	out := map[string]int{}
	for _, m := range c.members {
		out[fmt.Sprint("member ", m.id)] = led[m.resp]
	}
	return out, nil
}
