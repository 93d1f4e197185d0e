package tcptransport

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// kv is the state machine of the cluster tests: "key=value" puts.
type kv struct {
	mu   sync.Mutex
	data map[string]string
}

func newKV() *kv { return &kv{data: map[string]string{}} }

func (s *kv) Apply(batch []matrixraft.Command) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(batch))
	for i, c := range batch {
		k, v, _ := bytes.Cut(c.Data, []byte("="))
		s.data[string(k)] = string(v)
		out[i] = []byte("ok")
	}
	return out
}

func (s *kv) Snapshot(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.NewEncoder(w).Encode(s.data)
}

func (s *kv) Restore(r io.Reader) error {
	m := map[string]string{}
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return err
	}
	s.mu.Lock()
	s.data = m
	s.mu.Unlock()
	return nil
}

func (s *kv) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[k]
	return v, ok
}

func (s *kv) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.data)
}

// tcpCluster runs matrixraft nodes in this process, each with its own
// TCP transport on a loopback port and its own durable (fsynced) log.
type tcpCluster struct {
	t     *testing.T
	peers []matrixraft.Peer
	dirs  map[uint64]string
	tweak func(*Options, *matrixraft.Options)
	mu    sync.Mutex
	nodes map[uint64]*matrixraft.Node
	trs   map[uint64]*Transport
	sms   map[uint64]*kv
}

func newTCPCluster(t *testing.T, n int, tweak func(*Options, *matrixraft.Options)) *tcpCluster {
	c := &tcpCluster{t: t, dirs: map[uint64]string{}, tweak: tweak,
		nodes: map[uint64]*matrixraft.Node{}, trs: map[uint64]*Transport{}, sms: map[uint64]*kv{}}
	// Bind every listener first: the bootstrap peer list needs the ports.
	pre := map[uint64]*Transport{}
	for i := 1; i <= n; i++ {
		id := uint64(i)
		tr := c.newTransport(id, "127.0.0.1:0")
		pre[id] = tr
		c.peers = append(c.peers, matrixraft.Peer{ID: id, Addr: tr.Addr().String()})
		c.dirs[id] = t.TempDir()
	}
	for id, tr := range pre {
		c.startNode(id, tr, c.peers)
	}
	t.Cleanup(c.stopAll)
	return c
}

func (c *tcpCluster) newTransport(id uint64, addr string) *Transport {
	o := Options{ID: id, ListenAddr: addr, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
	if c.tweak != nil {
		c.tweak(&o, nil)
	}
	tr, err := New(o)
	require.NoError(c.t, err)
	return tr
}

func (c *tcpCluster) startNode(id uint64, tr *Transport, peers []matrixraft.Peer) {
	sm := newKV()
	o := matrixraft.Options{ID: id, Dir: c.dirs[id], Peers: peers, StateMachine: sm, Transport: tr,
		TickInterval: 20 * time.Millisecond}
	if c.tweak != nil {
		c.tweak(nil, &o)
	}
	n, err := matrixraft.StartNode(o)
	if err != nil {
		tr.Close()
	}
	require.NoError(c.t, err)
	c.mu.Lock()
	c.nodes[id], c.trs[id], c.sms[id] = n, tr, sm
	c.mu.Unlock()
}

func (c *tcpCluster) stop(id uint64) {
	c.mu.Lock()
	n := c.nodes[id]
	delete(c.nodes, id)
	c.mu.Unlock()
	n.Stop() // closes the transport too
}

// restart starts id again from its directory, on its old address.
func (c *tcpCluster) restart(id uint64) {
	c.startNode(id, c.newTransport(id, c.peers[id-1].Addr), nil)
}

func (c *tcpCluster) stopAll() {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = map[uint64]*matrixraft.Node{}
	c.mu.Unlock()
	for _, n := range nodes {
		n.Stop()
	}
}

func (c *tcpCluster) live() []*matrixraft.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*matrixraft.Node
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

func (c *tcpCluster) leader() *matrixraft.Node {
	c.t.Helper()
	var lead *matrixraft.Node
	require.Eventually(c.t, func() bool {
		for _, n := range c.live() {
			if n.Status().IsLeader {
				lead = n
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "no leader elected")
	return lead
}

// put proposes key=value through whichever node leads, retrying across
// elections.
func (c *tcpCluster) put(key, value string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		lead := c.leader()
		_, err := lead.Propose(c.t.Context(), []byte(key+"="+value))
		if err == nil {
			return
		}
		require.True(c.t, time.Now().Before(deadline), "put %s: %v", key, err)
		time.Sleep(20 * time.Millisecond)
	}
}

// converged waits until every live node has applied key with value.
func (c *tcpCluster) converged(key, value string) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for id := range c.nodes {
			if v, _ := c.sms[id].get(key); v != value {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond, "nodes did not converge on %s=%s", key, value)
}

func TestClusterOverTCP(t *testing.T) {
	c := newTCPCluster(t, 3, nil)
	lead := c.leader()
	for i := range 100 {
		c.put(fmt.Sprintf("k%d", i), fmt.Sprint(i))
	}
	c.converged("k99", "99")
	for _, n := range c.live() {
		require.NoError(t, n.Read(t.Context(), matrixraft.ReadLinearizable), "node %d", n.ID())
	}
	c.mu.Lock()
	st := c.trs[lead.ID()].Stats()
	c.mu.Unlock()
	require.Positive(t, st.MessagesSent)
	require.Positive(t, st.MessagesReceived)
	require.Len(t, st.Peers, 2)

	// Restart the leader: the others elect a new one, keep committing, and
	// the old leader comes back from its log and catches up over TCP.
	old := lead.ID()
	c.stop(old)
	lead = c.leader()
	require.NotEqual(t, old, lead.ID())
	for i := 100; i < 150; i++ {
		c.put(fmt.Sprintf("k%d", i), fmt.Sprint(i))
	}
	c.restart(old)
	c.put("after-restart", "yes")
	c.converged("after-restart", "yes")
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, 151, c.sms[old].len(), "the restarted node has every key")
	var reconnects uint64
	for _, tr := range c.trs {
		reconnects += tr.Stats().Reconnects
	}
	require.Positive(t, reconnects, "peers reconnected to the restarted node")
}

// TestSnapshotInstallOverTCP stops a follower, lets the leader compact its
// log past the follower's index, and restarts the follower: it can only
// catch up through a snapshot streamed in chunks over TCP.
func TestSnapshotInstallOverTCP(t *testing.T) {
	c := newTCPCluster(t, 3, func(o *Options, n *matrixraft.Options) {
		if o != nil {
			o.SnapshotChunkSize = 512
		}
		if n != nil {
			n.SnapshotEntries = 20
			n.CatchUpEntries = 5
		}
	})
	lead := c.leader()
	follower := lead.ID()%3 + 1
	c.put("before", "stop")
	c.converged("before", "stop")
	c.stop(follower)

	value := string(bytes.Repeat([]byte("v"), 100))
	for i := range 200 {
		c.put(fmt.Sprintf("k%03d", i), value)
	}
	lead = c.leader()
	require.Greater(t, lead.Status().SnapshotIndex, uint64(150), "the leader compacted")

	c.restart(follower)
	c.converged("k199", value)
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, 201, c.sms[follower].len())
	require.Positive(t, c.nodes[follower].Status().SnapshotsInstalled, "caught up through a snapshot")
	require.Positive(t, c.trs[follower].Stats().SnapshotsReceived)
	var sent uint64
	for id, tr := range c.trs {
		if id != follower {
			sent += tr.Stats().SnapshotsSent
		}
	}
	require.Positive(t, sent)
}

// testTLS is a self-signed certificate used as its own CA, valid for
// 127.0.0.1, with configs that require it on both ends (mutual TLS).
type testTLS struct {
	server, client *tls.Config
}

func selfSigned(t *testing.T) testTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "matrixraft test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	pair := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}
	return testTLS{
		server: &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS13},
		client: &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS13},
	}
}

func TestClusterOverTLS(t *testing.T) {
	cfg := selfSigned(t)
	c := newTCPCluster(t, 3, func(o *Options, _ *matrixraft.Options) {
		if o != nil {
			o.ServerTLS, o.ClientTLS = cfg.server, cfg.client
		}
	})
	for i := range 20 {
		c.put(fmt.Sprintf("k%d", i), "tls")
	}
	c.converged("k19", "tls")

}

// TestTLSRejectsStrangers checks that a TLS transport hears only peers that
// present a certificate it trusts, and that a peer unable to connect is
// reported unreachable.
func TestTLSRejectsStrangers(t *testing.T) {
	cfg, other := selfSigned(t), selfSigned(t)
	// Trusts the server but presents a certificate the server does not.
	stranger := cfg.client.Clone()
	stranger.Certificates = other.client.Certificates
	srv := newTransport(t, 1, func(o *Options) { o.ServerTLS, o.ClientTLS = cfg.server, cfg.client })
	got := newRecorder()
	require.NoError(t, srv.Start(got))
	for _, tc := range []struct {
		name    string
		tweak   func(*Options)
		trusted bool
	}{
		{"plain TCP", nil, false},
		{"untrusted certificate", func(o *Options) { o.ServerTLS, o.ClientTLS = other.server, other.client }, false},
		{"untrusted client certificate", func(o *Options) { o.ServerTLS, o.ClientTLS = other.server, stranger }, false},
		{"trusted certificate", func(o *Options) { o.ServerTLS, o.ClientTLS = cfg.server, cfg.client }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got.mu.Lock()
			got.msgs = nil
			got.mu.Unlock()
			cl := newTransport(t, 9, tc.tweak)
			r := newRecorder()
			require.NoError(t, cl.Start(r))
			cl.AddPeer(1, srv.Addr().String())
			for i := range uint64(20) {
				cl.Send([]*pb.Message{appMsg(9, 1, i, nil)})
				time.Sleep(5 * time.Millisecond)
			}
			if tc.trusted {
				got.waitFor(t, 5*time.Second, "delivery", func(r *recorder) bool { return len(r.msgs) > 0 })
				return
			}
			r.waitFor(t, 5*time.Second, "unreachable report", func(r *recorder) bool { return r.unreachable[1] > 0 })
			got.mu.Lock()
			defer got.mu.Unlock()
			require.Empty(t, got.msgs, "a stranger's message was delivered")
		})
	}
}
