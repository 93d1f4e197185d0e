package cluster

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
)

// Routes of the member's admin handler (AdminHandler).
const (
	adminMembers = "/cluster/members"
	adminShardOp = "/cluster/shard-op"
)

// AdminHandler serves the cluster's membership over HTTP, for the server
// to mount beside its command surface:
//
//	GET    /cluster/members        the members and every shard's voters, learners and leader (JSON)
//	POST   /cluster/members        add a member: {"id":4,"raft":"h:17200","resp":"h:6379","http":"h:17102"}
//	DELETE /cluster/members/{id}   remove member id
//	POST   /cluster/shard-op       one shard's part of a change, run on its leader (members call it)
//	GET    /cluster/liveness       this member's view: who it suspects down (members ask it)
//
// With Options.AdminTokens set, every request needs one as a bearer token.
// A change answers 200 once every shard took it, 400 for a bad request,
// 409 when refused (a shard would lose its quorum), 500 otherwise.
func (n *Node) AdminHandler() http.Handler { return http.HandlerFunc(n.serveAdmin) }

// memberInfo is a member as GET /cluster/members shows it.
type memberInfo struct {
	ID   uint64 `json:"id"`
	Raft string `json:"raft"`
	RESP string `json:"resp"`
	HTTP string `json:"http,omitempty"`
}

// shardInfo is a shard as GET /cluster/members shows it.
type shardInfo struct {
	Shard    int      `json:"shard"`
	Slots    [2]int   `json:"slots"`
	Leader   uint64   `json:"leader"`
	Voters   []uint64 `json:"voters"`
	Learners []uint64 `json:"learners"`
}

func (n *Node) authorized(r *http.Request) bool {
	if len(n.opts.AdminTokens) == 0 {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	for _, t := range n.opts.AdminTokens {
		if subtle.ConstantTimeCompare([]byte(got), []byte(t)) == 1 {
			return true
		}
	}
	return false
}

func (n *Node) serveAdmin(w http.ResponseWriter, r *http.Request) {
	if !n.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch {
	case r.URL.Path == adminLiveness && r.Method == http.MethodGet:
		n.serveView(w)
	case r.URL.Path == adminMembers && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(n.membership())
	case r.URL.Path == adminMembers && r.Method == http.MethodPost:
		var m memberInfo
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&m); err != nil {
			http.Error(w, "bad member: "+err.Error(), http.StatusBadRequest)
			return
		}
		n.answer(w, n.AddMember(r.Context(), Peer{ID: m.ID, RaftAddr: m.Raft, RESPAddr: m.RESP, HTTPAddr: m.HTTP}))
	case strings.HasPrefix(r.URL.Path, adminMembers+"/") && r.Method == http.MethodDelete:
		id, err := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, adminMembers+"/"), 10, 64)
		if err != nil || id == 0 {
			http.Error(w, "bad member id", http.StatusBadRequest)
			return
		}
		n.answer(w, n.RemoveMember(r.Context(), id))
	case r.URL.Path == adminShardOp && r.Method == http.MethodPost:
		var o shardOp
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&o); err != nil || o.Shard < 0 || o.Shard >= n.opts.Shards {
			http.Error(w, "bad shard operation", http.StatusBadRequest)
			return
		}
		g := n.group(o.Shard)
		if g == nil || g.Leader() != n.opts.ID {
			http.Error(w, fmt.Sprintf("member %d does not lead shard %d", n.opts.ID, o.Shard), http.StatusConflict)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), shardOpTimeout+catchUpTimeout)
		defer cancel()
		err := n.applyShardOp(ctx, g, o)
		if errors.Is(err, errMoved) {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		n.answer(w, err)
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}

func (n *Node) answer(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		w.WriteHeader(http.StatusOK)
	case errors.Is(err, ErrInvalidOptions):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, ErrMembership):
		http.Error(w, err.Error(), http.StatusConflict)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// membership is the members and shards as this member sees them.
func (n *Node) membership() map[string]any {
	seen := map[uint64]bool{}
	var members []memberInfo
	var shards []shardInfo
	for sh := range n.opts.Shards {
		si := shardInfo{Shard: sh, Slots: n.slots[sh]}
		if g := n.group(sh); g != nil {
			st := g.Status()
			si.Leader, si.Voters, si.Learners = st.Leader, st.Voters, st.Learners
		}
		for _, id := range append(append([]uint64{}, si.Voters...), si.Learners...) {
			if !seen[id] {
				seen[id] = true
				p := n.book.get(id)
				members = append(members, memberInfo{ID: id, Raft: p.RaftAddr, RESP: p.RESPAddr, HTTP: p.HTTPAddr})
			}
		}
		shards = append(shards, si)
	}
	var convicted []uint64
	for _, m := range members {
		if n.Convicted(m.ID) {
			convicted = append(convicted, m.ID)
		}
	}
	return map[string]any{"self": n.opts.ID, "members": members, "shards": shards, "convicted": convicted}
}

// ClusterAdmin implements resp's cluster administration: CLUSTER
// ADDMEMBER id raft-addr resp-addr [http-addr] and CLUSTER FORGET id.
func (n *Node) ClusterAdmin(ctx context.Context, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(n.opts.Shards)*(shardOpTimeout+catchUpTimeout))
	defer cancel()
	switch strings.ToLower(args[0]) {
	case "addmember":
		if len(args) < 4 || len(args) > 5 {
			return fmt.Errorf("%w: CLUSTER ADDMEMBER id raft-addr resp-addr [http-addr]", ErrInvalidOptions)
		}
		id, err := strconv.ParseUint(args[1], 10, 64)
		if err != nil || id == 0 {
			return fmt.Errorf("%w: member id %q", ErrInvalidOptions, args[1])
		}
		p := Peer{ID: id, RaftAddr: args[2], RESPAddr: args[3]}
		if len(args) == 5 {
			p.HTTPAddr = args[4]
		}
		return n.AddMember(ctx, p)
	case "forget":
		if len(args) != 2 {
			return fmt.Errorf("%w: CLUSTER FORGET id", ErrInvalidOptions)
		}
		id, err := parseMemberID(args[1])
		if err != nil {
			return err
		}
		return n.RemoveMember(ctx, id)
	}
	return fmt.Errorf("%w: unknown cluster operation %q", ErrInvalidOptions, args[0])
}

// parseMemberID reads a member's raft ID, or its 40-character NodeID.
func parseMemberID(s string) (uint64, error) {
	base := 10
	if len(s) == 40 {
		s, base = strings.TrimLeft(s, "0"), 16
	}
	id, err := strconv.ParseUint(s, base, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("%w: member id %q", ErrInvalidOptions, s)
	}
	return id, nil
}

var _ resp.ClusterAdmin = (*Node)(nil)
