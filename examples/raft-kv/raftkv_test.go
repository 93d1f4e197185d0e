package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/examples/raft-kv/kvwire"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

func TestParseFlags(t *testing.T) {
	base := []string{"--id", "2", "--peers", "1=127.0.0.1:7001, 2=127.0.0.1:7002,3=127.0.0.1:7003", "--http", "127.0.0.1:8002", "--data", "d"}
	c, err := parseFlags(base, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []matrixraft.Peer{{ID: 1, Addr: "127.0.0.1:7001"}, {ID: 2, Addr: "127.0.0.1:7002"}, {ID: 3, Addr: "127.0.0.1:7003"}}, c.peers)
	require.Empty(t, c.httpPeers)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing id", []string{"--peers", "1=a:1", "--http", "h:1", "--data", "d"}, "--id"},
		{"id not in peers", []string{"--id", "4", "--peers", "1=a:1", "--http", "h:1", "--data", "d"}, "must list"},
		{"bad peer", []string{"--id", "1", "--peers", "1=nocolon", "--http", "h:1", "--data", "d"}, "--peers"},
		{"zero peer id", []string{"--id", "1", "--peers", "0=a:1,1=a:2", "--http", "h:1", "--data", "d"}, "non-zero"},
		{"duplicate", []string{"--id", "1", "--peers", "1=a:1,1=a:2", "--http", "h:1", "--data", "d"}, "twice"},
		{"no data", []string{"--id", "1", "--peers", "1=a:1", "--http", "h:1"}, "--data"},
		{"bad level", append(base, "--log-level", "loud"), "--log-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			require.ErrorContains(t, err, tc.want)
		})
	}
	var help bytes.Buffer
	_, err = parseFlags([]string{"--help"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-id", "-peers", "-http", "-http-peers", "-data", "-tick", "-election-ticks", "-snapshot-entries", "-catchup-entries", "-request-timeout", "-log-level"} {
		require.Contains(t, help.String(), "  "+f+" ", "--help explains %s", f)
	}
}

// all returns every key and value of the store.
func (s *store) all() map[string][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string][]byte{}
	for _, sh := range s.shards {
		maps.Copy(out, sh.data)
	}
	return out
}

// snapshotOf writes s's snapshot by Snapshot or through a capture.
func snapshotOf(t *testing.T, s *store, capture bool) []byte {
	var buf bytes.Buffer
	if capture {
		c, err := s.CaptureSnapshot()
		require.NoError(t, err)
		_, err = c.WriteTo(&buf)
		require.NoError(t, err)
	} else {
		require.NoError(t, s.Snapshot(&buf))
	}
	return buf.Bytes()
}

func TestStoreSnapshotRoundTrip(t *testing.T) {
	for _, capture := range []bool{false, true} {
		t.Run(fmt.Sprintf("capture=%v", capture), func(t *testing.T) {
			s := newStore()
			s.Apply([]matrixraft.Command{
				{Index: 1, Data: encodePut("a", []byte("1"))},
				{Index: 2, Data: encodePut("", []byte("empty key"))},
				{Index: 3, Data: encodePut("bin", []byte{0, 1, 2, 255})},
				{Index: 4, Data: []byte("garbage")},
				{Index: 5, Data: encodePut("a", []byte("2"))},
			})
			snap := snapshotOf(t, s, capture)
			r := newStore()
			require.NoError(t, r.Restore(bytes.NewReader(snap)))
			require.Equal(t, s.all(), r.all())
			require.Equal(t, map[string][]byte{"a": []byte("2"), "": []byte("empty key"), "bin": {0, 1, 2, 255}}, r.all())
			require.Equal(t, snap, snapshotOf(t, r, !capture), "equal states give equal snapshots, either way")
			require.Error(t, newStore().Restore(bytes.NewReader(snap[:len(snap)-1])))
		})
	}
}

// TestStoreCaptureIgnoresLaterWrites takes a capture, changes the store
// (and restores it) before writing the capture, and requires the capture
// to hold the state of its moment while the store moved on.
func TestStoreCaptureIgnoresLaterWrites(t *testing.T) {
	tests := []struct {
		name  string
		after func(t *testing.T, s *store)
	}{
		{"overwrites and new keys", func(t *testing.T, s *store) {
			var cmds []matrixraft.Command
			for i := range 2000 {
				cmds = append(cmds, matrixraft.Command{Index: uint64(1000 + i), Data: encodePut(fmt.Sprintf("k%d", i%700), []byte(fmt.Sprint("new", i)))})
			}
			s.Apply(cmds)
		}},
		{"a second capture, then writes", func(t *testing.T, s *store) {
			_, err := s.CaptureSnapshot()
			require.NoError(t, err)
			s.Apply([]matrixraft.Command{{Index: 2000, Data: encodePut("k1", []byte("x"))}})
		}},
		{"restore", func(t *testing.T, s *store) {
			other := newStore()
			other.Apply([]matrixraft.Command{{Index: 1, Data: encodePut("z", []byte("26"))}})
			require.NoError(t, s.Restore(bytes.NewReader(snapshotOf(t, other, false))))
			s.Apply([]matrixraft.Command{{Index: 2, Data: encodePut("k1", []byte("y"))}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore()
			var cmds []matrixraft.Command
			for i := range 500 {
				cmds = append(cmds, matrixraft.Command{Index: uint64(i + 1), Data: encodePut(fmt.Sprintf("k%d", i), []byte(fmt.Sprint("v", i)))})
			}
			s.Apply(cmds)
			want := s.all()
			wantSnap := snapshotOf(t, s, false)
			c, err := s.CaptureSnapshot()
			require.NoError(t, err)
			tt.after(t, s)
			require.NotEqual(t, want, s.all())
			var buf bytes.Buffer
			_, err = c.WriteTo(&buf)
			require.NoError(t, err)
			require.Equal(t, wantSnap, buf.Bytes())
		})
	}
}

// proc is one raft-kv process of the test cluster.
type proc struct {
	id    uint64
	http  string
	kv    string
	args  []string
	log   string
	cmd   *exec.Cmd
	done  chan struct{}
	alive bool
}

type procCluster struct {
	t     *testing.T
	bin   string
	procs map[uint64]*proc
	hc    *http.Client
}

func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, servertest.FreeAddr(t))
	}
	return out
}

func (c *procCluster) start(p *proc) {
	c.t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(c.t, err)
	defer f.Close()
	p.cmd = exec.Command(c.bin, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	require.NoError(c.t, p.cmd.Start())
	p.done, p.alive = make(chan struct{}), true
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(p.cmd, p.done)
}

func (c *procCluster) kill(p *proc) {
	require.NoError(c.t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	p.alive = false
}

type statusView struct {
	Node struct {
		ID                 uint64
		Leader             uint64
		IsLeader           bool
		Commit             uint64
		Applied            uint64
		SnapshotsInstalled uint64
	}
}

func (c *procCluster) status(p *proc) (statusView, error) {
	var s statusView
	resp, err := c.hc.Get("http://" + p.http + "/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// leader waits for a live process that says it leads, other than not.
func (c *procCluster) leader(not uint64) *proc {
	c.t.Helper()
	var lead *proc
	require.Eventually(c.t, func() bool {
		for _, p := range c.procs {
			if !p.alive || p.id == not {
				continue
			}
			if s, err := c.status(p); err == nil && s.Node.IsLeader {
				lead = p
				return true
			}
		}
		return false
	}, 15*time.Second, 20*time.Millisecond, "no leader")
	return lead
}

func (c *procCluster) put(p *proc, key, value string) error {
	req, err := http.NewRequest(http.MethodPut, "http://"+p.http+"/kv/"+key, strings.NewReader(value))
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT %s on %d: %s: %s", key, p.id, resp.Status, b)
	}
	return nil
}

func (c *procCluster) get(p *proc, key string, stale bool) (string, error) {
	url := "http://" + p.http + "/kv/" + key
	if stale {
		url += "?stale=1"
	}
	resp, err := c.hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s on %d: %s: %s", key, p.id, resp.Status, b)
	}
	return string(b), err
}

// TestKillLeaderFailover runs three raft-kv processes, SIGKILLs the leader
// while a client writes, and checks that a new leader takes over, that no
// acknowledged write is lost, and that the killed process restarts from
// its data directory and catches up (through a snapshot: it fell behind
// the leader's compaction).
func TestKillLeaderFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three processes")
	}
	dir := t.TempDir()
	c := &procCluster{t: t, bin: filepath.Join(dir, "raft-kv"), procs: map[uint64]*proc{},
		hc: &http.Client{Timeout: 3 * time.Second}}
	build := exec.Command("go", "build", "-buildvcs=false", "-o", c.bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	addrs := freeAddrs(t, 9)
	var peers, httpPeers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, addrs[i]))
		httpPeers = append(httpPeers, fmt.Sprintf("%d=%s", i+1, addrs[3+i]))
	}
	for i := range 3 {
		id := uint64(i + 1)
		p := &proc{id: id, http: addrs[3+i], kv: addrs[6+i], log: filepath.Join(dir, fmt.Sprintf("node%d.log", id)), args: []string{
			"--id", fmt.Sprint(id), "--peers", strings.Join(peers, ","), "--http", addrs[3+i],
			"--http-peers", strings.Join(httpPeers, ","), "--kv", addrs[6+i], "--data", filepath.Join(dir, fmt.Sprintf("data%d", id)),
			"--tick", "50ms", "--snapshot-entries", "50", "--catchup-entries", "10", "--request-timeout", "2s", "--log-level", "debug",
		}}
		c.procs[id] = p
		c.start(p)
	}
	t.Cleanup(func() {
		for _, p := range c.procs {
			if p.alive {
				c.kill(p)
			}
			if t.Failed() {
				b, _ := os.ReadFile(p.log)
				t.Logf("--- node %d log (tail) ---\n%s", p.id, tail(string(b), 40))
			}
		}
	})

	lead := c.leader(0)
	t.Logf("leader: node %d", lead.id)

	// The writer puts k00000, k00001, ... one at a time, each retried on
	// any node until acknowledged (a follower redirects to the leader).
	var (
		mu    sync.Mutex
		acked int
	)
	ackedNow := func() int { mu.Lock(); defer mu.Unlock(); return acked }
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		target := uint64(1)
		for i := 0; ; i++ {
			key, val := fmt.Sprintf("k%05d", i), fmt.Sprintf("v%05d", i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := c.put(c.procs[target], key, val); err == nil {
					break
				}
				target = target%3 + 1
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			acked = i + 1
			mu.Unlock()
		}
	}()
	waitAcked := func(n int) {
		require.Eventually(t, func() bool { return ackedNow() >= n }, 20*time.Second, 5*time.Millisecond, "writes stalled at %d", ackedNow())
	}

	waitAcked(60)
	c.kill(lead)
	atKill := ackedNow()
	t.Logf("SIGKILLed node %d after %d acknowledged writes", lead.id, atKill)

	newLead := c.leader(lead.id)
	t.Logf("new leader: node %d", newLead.id)
	waitAcked(atKill + 100)
	close(stop)
	<-stopped
	total := ackedNow()
	t.Logf("%d writes acknowledged, %d after the kill", total, total-atKill)

	// Every acknowledged write is on both survivors, by linearizable read.
	for _, p := range c.procs {
		if !p.alive {
			continue
		}
		for i := range total {
			v, err := c.get(p, fmt.Sprintf("k%05d", i), false)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("v%05d", i), v)
		}
	}

	// The killed process restarts from its directory and catches up.
	s, err := c.status(newLead)
	require.NoError(t, err)
	c.start(lead)
	require.Eventually(t, func() bool {
		st, err := c.status(lead)
		return err == nil && st.Node.Applied >= s.Node.Commit
	}, 20*time.Second, 20*time.Millisecond, "the restarted node did not catch up")
	for i := range total {
		v, err := c.get(lead, fmt.Sprintf("k%05d", i), true)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("v%05d", i), v)
	}
	st, err := c.status(lead)
	require.NoError(t, err)
	require.Positive(t, st.Node.SnapshotsInstalled, "it fell behind compaction, so it caught up through a snapshot over TCP")
	// And it serves linearizable reads and takes writes again.
	require.NoError(t, c.put(lead, "after", "restart"))
	v, err := c.get(lead, "after", false)
	require.NoError(t, err)
	require.Equal(t, "restart", v)

	// The binary protocol serves the same store: writes on the leader,
	// reads anywhere, and "not leader" with the leader's ID elsewhere.
	ctx := context.Background()
	lead = c.leader(0)
	for _, p := range c.procs {
		kc, err := kvwire.Dial(ctx, p.kv)
		require.NoError(t, err)
		got, err := kc.Get(ctx, "k00000")
		require.NoError(t, err)
		require.Equal(t, "v00000", string(got))
		_, err = kc.Get(ctx, "never-written")
		require.ErrorIs(t, err, kvwire.ErrNotFound)
		key := fmt.Sprintf("wire-%d", p.id)
		err = kc.Put(ctx, key, []byte("w"))
		if p != lead {
			var nl *kvwire.NotLeaderError
			require.ErrorAs(t, err, &nl)
			require.Equal(t, lead.id, nl.Leader)
			_, err = kc.Get(ctx, key)
			require.ErrorIs(t, err, kvwire.ErrNotFound, "a refused put changed nothing")
		} else {
			require.NoError(t, err)
			v, err := c.get(p, key, false)
			require.NoError(t, err)
			require.Equal(t, "w", v)
		}
		require.NoError(t, kc.Close())
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
