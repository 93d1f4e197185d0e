package cluster

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

func TestParsePeers(t *testing.T) {
	ps, err := ParsePeers(" 1@127.0.0.1:17200@127.0.0.1:6379, 2@h2:17200@h2:6379@h2:17102,3@h3:1@h3:2@h3:3@zone-b")
	require.NoError(t, err)
	require.Equal(t, []Peer{{ID: 1, RaftAddr: "127.0.0.1:17200", RESPAddr: "127.0.0.1:6379"}, {ID: 2, RaftAddr: "h2:17200", RESPAddr: "h2:6379", HTTPAddr: "h2:17102"},
		{ID: 3, RaftAddr: "h3:1", RESPAddr: "h3:2", HTTPAddr: "h3:3", Zone: "zone-b"}}, ps)
	for _, bad := range []string{"1@a", "0@a@b", "x@a@b", "1@@b", "1@a@", "1@a@b,1@c@d", "1@a@b@", "1@a@b@c@", "1@a@b@c@d@e"} {
		_, err := ParsePeers(bad)
		require.ErrorIs(t, err, ErrInvalidOptions, bad)
	}
}

// The ranges CLUSTER SLOTS reports are the slots SlotShard routes.
func TestSlotRangesMatchRouting(t *testing.T) {
	for _, shards := range []int{1, 2, 3, 4, 7, 16} {
		rs := slotRanges(shards)
		require.Len(t, rs, shards)
		require.Equal(t, 0, rs[0][0])
		require.Equal(t, temporalstore.HashSlots-1, rs[shards-1][1])
		for sh, r := range rs {
			if sh > 0 {
				require.Equal(t, rs[sh-1][1]+1, r[0], "contiguous")
			}
			for _, slot := range []int{r[0], r[1]} {
				require.Equal(t, sh, temporalstore.SlotShard(slot, shards))
			}
		}
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	peers := []Peer{{ID: 1, RaftAddr: "127.0.0.1:0", RESPAddr: "127.0.0.1:6379"}}
	for name, o := range map[string]Options{
		"no dir":          {ID: 1, Peers: peers, Shards: 1},
		"no shards":       {Dir: t.TempDir(), ID: 1, Peers: peers},
		"not a peer":      {Dir: t.TempDir(), ID: 2, Peers: peers, Shards: 1},
		"too many":        {Dir: t.TempDir(), ID: 1, Peers: peers, Shards: temporalstore.HashSlots + 1},
		"no peers at all": {Dir: t.TempDir(), ID: 1, Shards: 1},
	} {
		_, err := Start(o)
		require.ErrorIs(t, err, ErrInvalidOptions, name)
	}
}

func TestNodeID(t *testing.T) {
	require.Equal(t, "0000000000000000000000000000000000000003", NodeID(3))
	require.Len(t, NodeID(^uint64(0)), 40)
}

// Shard i is meant for the i-th voter in ID order, round robin.
func TestPreferredLeaders(t *testing.T) {
	var got []uint64
	for sh := range 5 {
		got = append(got, preferred(sh, []uint64{7, 3, 5}))
	}
	require.Equal(t, []uint64{3, 5, 7, 3, 5}, got)
}

func TestAddresses(t *testing.T) {
	p := Peer{ID: 4, RaftAddr: "h:1", RESPAddr: "h:2", HTTPAddr: "h:3", Zone: "z"}
	require.Equal(t, p, splitAddr(4, joinAddr(p)))
	require.Equal(t, Peer{ID: 4, RaftAddr: "h:1"}, splitAddr(4, "h:1"))
	b := addressBook{peers: map[uint64]Peer{}}
	b.learn(p)
	b.learn(Peer{ID: 4, RaftAddr: "h:9"}) // a bare raft address keeps the rest
	require.Equal(t, Peer{ID: 4, RaftAddr: "h:9", RESPAddr: "h:2", HTTPAddr: "h:3", Zone: "z"}, b.get(4))
}

// A shard's voters are spread over zones first, and every member
// computes the same ones.
func TestDesiredVotersSpreadOverZones(t *testing.T) {
	n := &Node{opts: Options{Replicas: 3, Namespace: "default", Table: "default"}, book: addressBook{peers: map[uint64]Peer{}}, watch: newWatcher()}
	for id, zone := range map[uint64]string{1: "a", 2: "a", 3: "b", 4: "c"} {
		n.book.learn(Peer{ID: id, RaftAddr: "r", RESPAddr: "s", Zone: zone})
	}
	seen := map[uint64]int{}
	for sh := range 16 {
		want, err := n.desired(sh, []uint64{1, 2, 3, 4})
		require.NoError(t, err)
		require.Len(t, want, 3)
		require.Contains(t, want, uint64(3), "zone b has one member")
		require.Contains(t, want, uint64(4), "zone c has one member")
		again, err := n.desired(sh, []uint64{4, 3, 2, 1})
		require.NoError(t, err)
		require.Equal(t, want, again, "the order members come in changes nothing")
		for _, id := range want {
			seen[id]++
		}
	}
	require.Positive(t, seen[1], "zone a's two members share its shards")
	require.Positive(t, seen[2])
	// Fewer members than replicas: every member votes.
	want, err := n.desired(0, []uint64{1, 3})
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 3}, want)
	// A convicted member votes nowhere: zone a's other member takes its
	// place.
	n.watch.convicts[3] = true
	for sh := range 16 {
		want, err := n.desired(sh, []uint64{1, 2, 3, 4})
		require.NoError(t, err)
		require.Equal(t, []uint64{1, 2, 4}, want)
	}
}

// The admin routes take a bearer token when tokens are set, and a lone
// member describes itself.
func TestAdminHandler(t *testing.T) {
	n, err := Start(Options{Dir: t.TempDir(), ID: 1, Shards: 2, AdminTokens: []string{"secret"},
		Peers: []Peer{{ID: 1, RaftAddr: "127.0.0.1:0", RESPAddr: "127.0.0.1:6379", HTTPAddr: "127.0.0.1:17102", Zone: "z"}}})
	require.NoError(t, err)
	defer n.Close()
	for sh := range 2 {
		_, err := n.OpenLog(t.Context(), storage.LogOptions{Dir: t.TempDir(), Namespace: temporalstore.DefaultNamespace, Table: temporalstore.DefaultTable, Shard: sh})
		require.NoError(t, err)
	}
	srv := httptest.NewServer(n.AdminHandler())
	defer srv.Close()
	get := func(path, token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, _ := get("/cluster/members", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = get("/cluster/members", "wrong")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Eventually(t, func() bool {
		code, body := get("/cluster/members", "secret")
		return code == http.StatusOK && strings.Contains(body, `"voters":[1]`) && strings.Contains(body, `"leader":1`)
	}, 10*time.Second, 20*time.Millisecond)
	code, body := get("/cluster/liveness", "secret")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"member":1,"suspects":null}`, body)
	code, _ = get("/cluster/nowhere", "secret")
	require.Equal(t, http.StatusNotFound, code)
	// A removal of the only member is refused: no shard may lose its last voter.
	req, err := http.NewRequest(http.MethodDelete, srv.URL+"/cluster/members/1", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Eventually(t, func() bool { ok, _ := n.Ready(); return ok }, 10*time.Second, 20*time.Millisecond)
}
