package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/cluster/liveness"
)

// DefaultWatchInterval is how often a member asks every other member for
// its view (Options.WatchInterval): each answer is a heartbeat of the
// φ-accrual detector, and carries the answering member's suspicions.
const DefaultWatchInterval = 250 * time.Millisecond

// watchPause is the pause a live member may take between answers (a GC,
// a loaded machine) without being suspected.
const watchPause = 500 * time.Millisecond

const adminLiveness = "/cluster/liveness"

// view is what /cluster/liveness answers: the member and those it
// suspects.
type view struct {
	Member   uint64   `json:"member"`
	Suspects []uint64 `json:"suspects"`
}

// watcher keeps this member's detector, the views gathered from the
// others, and the jury's verdict.
type watcher struct {
	det *liveness.Detector

	mu       sync.Mutex
	jury     *liveness.Jury
	members  []string // the jury's members, sorted
	verdict  liveness.Verdict
	convicts map[uint64]bool
	safe     uint64 // evaluations that ended in safe mode
}

func newWatcher() *watcher {
	d, _ := liveness.NewDetector(liveness.Options{AcceptablePause: watchPause, FirstInterval: DefaultWatchInterval})
	return &watcher{det: d, convicts: map[uint64]bool{}}
}

// members is every voter or learner of any shard, as this member sees
// them, sorted.
func (n *Node) members() []uint64 {
	seen := map[uint64]bool{}
	for sh := range n.opts.Shards {
		if g := n.group(sh); g != nil {
			st := g.Status()
			for _, id := range append(st.Voters, st.Learners...) {
				seen[id] = true
			}
		}
	}
	out := make([]uint64, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// placement is every shard's voters, by name, for the jury's refusal to
// convict the last live voter of a shard.
func (n *Node) placement() map[string][]string {
	out := map[string][]string{}
	for sh := range n.opts.Shards {
		if g := n.group(sh); g != nil {
			for _, v := range g.Status().Voters {
				out[strconv.Itoa(sh)] = append(out[strconv.Itoa(sh)], strconv.FormatUint(v, 10))
			}
		}
	}
	return out
}

// suspects is this member's detector's view.
func (w *watcher) suspects(now time.Time) []uint64 {
	var out []uint64
	for _, s := range w.det.Suspected(now) {
		if id, err := strconv.ParseUint(s, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// watchOnce asks every other member for its view, feeds the detector and
// the jury, and keeps the verdict.
func (n *Node) watchOnce(ctx context.Context) {
	w := n.watch
	self := n.opts.ID
	ids := n.members()
	if !slices.Contains(ids, self) || len(ids) < 2 {
		return // not (or no longer) a member of anything
	}
	views := make(map[uint64][]uint64, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range ids {
		addr := n.book.get(id).HTTPAddr
		if id == self || addr == "" {
			continue
		}
		wg.Go(func() {
			v, ok := n.askView(ctx, addr)
			if !ok || v.Member != id {
				return
			}
			w.det.Heartbeat(strconv.FormatUint(id, 10), time.Now())
			mu.Lock()
			views[id] = v.Suspects
			mu.Unlock()
		})
	}
	wg.Wait()
	views[self] = w.suspects(time.Now())

	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.FormatUint(id, 10)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Equal(names, w.members) {
		j, err := liveness.NewJury(names, liveness.JuryOptions{Placement: n.placement})
		if err != nil {
			return
		}
		w.jury, w.members = j, names
	}
	for id, sus := range views {
		s := make([]string, 0, len(sus))
		for _, x := range sus {
			if slices.Contains(ids, x) {
				s = append(s, strconv.FormatUint(x, 10))
			}
		}
		_ = w.jury.Report(strconv.FormatUint(id, 10), s)
	}
	v := w.jury.Evaluate()
	w.verdict = v
	if v.SafeMode {
		w.safe++
	}
	clear(w.convicts)
	for _, c := range v.Convicted {
		if id, err := strconv.ParseUint(c, 10, 64); err == nil {
			w.convicts[id] = true
		}
	}
	for _, c := range v.Newly {
		n.opts.Logger.Warn("cluster: member convicted as down by the other members", "member", c)
	}
	for _, c := range v.Acquitted {
		n.opts.Logger.Info("cluster: member acquitted, up again", "member", c)
	}
	for m, why := range v.Refused {
		n.opts.Logger.Warn("cluster: member not convicted", "member", m, "reason", why)
	}
	if v.SafeMode {
		n.opts.Logger.Warn("cluster: liveness in safe mode, convicting no one new", "reason", v.SafeReason)
	}
}

// askView asks the member at addr for its view.
func (n *Node) askView(ctx context.Context, addr string) (view, bool) {
	ctx, cancel := context.WithTimeout(ctx, n.opts.WatchInterval)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+adminLiveness, nil)
	if err != nil {
		return view{}, false
	}
	if len(n.opts.AdminTokens) > 0 {
		req.Header.Set("Authorization", "Bearer "+n.opts.AdminTokens[0])
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return view{}, false
	}
	defer resp.Body.Close()
	var v view
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		return view{}, false
	}
	return v, true
}

// serveView answers /cluster/liveness.
func (n *Node) serveView(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(view{Member: n.opts.ID, Suspects: n.watch.suspects(time.Now())})
}

// Convicted reports whether the members' jury holds member id down.
func (n *Node) Convicted(id uint64) bool {
	n.watch.mu.Lock()
	defer n.watch.mu.Unlock()
	return n.watch.convicts[id]
}

// watchLoop runs watchOnce every interval until ctx ends.
func (n *Node) watchLoop(ctx context.Context, every time.Duration) {
	defer close(n.watchDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.watchOnce(ctx)
		}
	}
}
