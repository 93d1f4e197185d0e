package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Cluster routes the HTTP surface's commands in a cluster (Options.Cluster):
// a command on a key whose shard another member leads is forwarded to it,
// and a leader's reads are linearizable.
type Cluster interface {
	// Leader returns the HTTP base URL (http://host:port) of the member
	// leading the shard key routes to in table namespace/name: "" when
	// this member serves it (it leads it, or the table is not replicated).
	// It fails when no member leads the shard now, or its HTTP address is
	// not known.
	Leader(namespace, name string, key []byte) (string, error)
	// ReadBarrier returns once this member's replica of key's shard holds
	// every write acknowledged before the call; with lease, on the shard
	// leader's lease when it holds one (no round to a quorum).
	ReadBarrier(ctx context.Context, namespace, name string, key []byte, lease bool) error
}

// forwardTimeout bounds a forwarded request, the leader's answer included.
const forwardTimeout = 30 * time.Second

// staleHeader asks, per request, for a read of this member's replica
// ("X-Temporalstore-Read: stale"): a request of reads only then runs here,
// neither forwarded to the leader nor waiting for its read barrier, and
// may miss the latest writes by the replica's lag. "lease" asks for the
// leader's reads on its lease instead of a round to a quorum.
const staleHeader = "X-Temporalstore-Read"

// forwardedHeader marks a request one member forwarded to another: it is
// never forwarded again, so members that disagree on a leader for a moment
// cannot pass a request round.
const forwardedHeader = "X-Temporalstore-Forwarded"

// route says where calls run: "" here, else the leader's URL they all go
// to. A call without a key, or of a kind Options.Context serves, runs
// here. Calls bound for two members, or here and elsewhere, are run here:
// those of shards this member does not lead then fail with not_leader.
// For calls run here, it passes the read barrier of each read's shard.
func (h *Handler) route(ctx context.Context, r *http.Request, calls []wire.Call) (string, error) {
	cl := h.opts.Cluster
	if cl == nil {
		return "", nil
	}
	forwarded := r.Header.Get(forwardedHeader) != ""
	lease := strings.EqualFold(r.Header.Get(staleHeader), "lease")
	if strings.EqualFold(r.Header.Get(staleHeader), "stale") && !slices.ContainsFunc(calls, func(c wire.Call) bool { return c.Write() }) {
		return "", nil
	}
	target, mixed := "", false
	var reads []int
	for i := range calls {
		c := &calls[i]
		cmd := c.Lend()
		var url string
		var err error
		served, _ := h.serves(c)
		if served {
			// A context kind goes where the context is served.
			leader, ok := h.opts.Context.(ContextLeader)
			if !ok {
				continue
			}
			url, err = leader.ContextLeader(ctx)
		} else {
			if c.Unsupported() || len(cmd.Key) == 0 {
				continue
			}
			url, err = cl.Leader(cmd.Namespace, cmd.Table, cmd.Key)
		}
		if err != nil {
			return "", err
		}
		switch {
		case url == "":
			mixed = mixed || target != ""
			target = "-"
			if !c.Write() && !served {
				reads = append(reads, i)
			}
		case target == "" || target == url:
			target = url
		default:
			mixed = true
		}
	}
	if target != "" && target != "-" && !mixed && !forwarded {
		return target, nil
	}
	for _, i := range reads {
		cmd := calls[i].Lend()
		if err := cl.ReadBarrier(ctx, cmd.Namespace, cmd.Table, cmd.Key, lease); err != nil {
			return "", err
		}
	}
	return "", nil
}

// forward sends the request, whose body was read into body, to the same
// route on the member at base, and copies its answer back.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, route, base string, body []byte, mp bool) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, base+route, bytes.NewReader(body))
	if err != nil {
		h.fail(w, route, http.StatusBadGateway, mp, Status{Code: CodeNotReady, Message: err.Error()})
		return
	}
	for _, k := range []string{"Content-Type", "Accept", "Authorization", staleHeader} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set(forwardedHeader, "1")
	resp, err := h.client.Do(req)
	if err != nil {
		h.fail(w, route, http.StatusBadGateway, mp, Status{Code: CodeNotReady, Message: fmt.Sprintf("forwarding to the shard's leader at %s: %v", base, err)})
		return
	}
	defer resp.Body.Close()
	for _, k := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	h.metrics.forwarded.Inc()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
