package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Workload is the day's requests, drawn once from a seed so that every
// backend and repeat serves the same ones: request i comes from user
// Users[i] on a page of topic Topics[i] at simulated time At(i).
type Workload struct {
	Users  []int32
	Topics []uint8
	// NumUsers is the size of the user space the users are drawn from.
	NumUsers int
	seed     uint64
}

// NewWorkload draws n requests from users users, both users and topics
// Zipf-distributed.
func NewWorkload(seed uint64, n, users int) *Workload {
	rng := rand.New(rand.NewPCG(seed, 0x10ad))
	uz := rand.NewZipf(rng, userSkew, userOffset, uint64(users-1))
	tz := rand.NewZipf(rng, topicSkew, 1, topicCount-1)
	w := &Workload{Users: make([]int32, n), Topics: make([]uint8, n), NumUsers: users, seed: seed}
	for i := range n {
		w.Users[i] = int32(uz.Uint64())
		w.Topics[i] = uint8(tz.Uint64())
	}
	return w
}

// At is request i's simulated time.
func (w *Workload) At(i int) int64 { return dayStart + int64(i)*dayMs/int64(len(w.Users)) }

// Draws of a request, each its own stream of the seed.
const (
	drawClick = iota + 1
	drawRetryImp
	drawRetryClick
)

// draw is request i's uniform draw of kind, in [0, 1).
func (w *Workload) draw(i int, kind uint64) float64 {
	return unit(mix(w.seed ^ kind<<56 ^ uint64(i)))
}

// runConfig is how one run of the day goes.
type runConfig struct {
	clients   int
	maxOffers int
	retry     float64
	refresh   time.Duration
	// progress is how often the run logs how far it is.
	progress time.Duration
	// serverPID is the backend's server process, when this program
	// started it (0 otherwise): its CPU time is measured.
	serverPID int
	// noCheck skips reading the state back and checking the invariants:
	// for the null server, which keeps none.
	noCheck bool
}

// RunResult is one backend's run of the day.
type RunResult struct {
	Backend      string  `json:"backend"`
	Repeat       int     `json:"repeat"`
	Decisions    int     `json:"decisions"`
	Seconds      float64 `json:"seconds"`
	PerSecond    float64 `json:"decisions_per_s"`
	P50us        float64 `json:"p50_us"`
	P99us        float64 `json:"p99_us"`
	FillRate     float64 `json:"fill_rate"`
	Impressions  int64   `json:"impressions"`
	Clicks       int64   `json:"clicks"`
	Offers       int64   `json:"offers_tried"`
	Refused      int64   `json:"offers_refused"`
	Retries      int64   `json:"retries"`
	CheckSeconds float64 `json:"check_seconds"`
	// HistoryPoints is the impressions a history read returned, on
	// average: what the reply to it carries.
	HistoryPoints float64 `json:"history_points_per_decision"`
	// ServerCPUus and ClientCPUus are the CPU time (user and system) a
	// decision took in the server, when this program started it, and in
	// this program (load generator and, for map, the store). A
	// BoundPerS is the decisions a second one side would allow on one
	// CPU of its own if nothing else limited it: 1e6 over its CPUus.
	ServerCPUus     float64 `json:"server_cpu_us_per_decision,omitempty"`
	ClientCPUus     float64 `json:"client_cpu_us_per_decision"`
	ServerBoundPerS float64 `json:"server_bound_per_s,omitempty"`
	ClientBoundPerS float64 `json:"client_bound_per_s"`
	// Invariants is the check of the backend's state after the run.
	Invariants Invariants `json:"invariants"`
}

// runner serves a day of requests on one backend.
type runner struct {
	b   Backend
	cat *Catalog
	w   *Workload
	cfg runConfig
	// spend is the pacing filter's view of each campaign's spend: what
	// this process charged or is taking, raised to the backend's spend
	// (other processes' charges too) every cfg.refresh.
	spend []atomic.Int64
	tally struct {
		imps, charges []atomic.Int64
		clicks        atomic.Int64
		// retries counts events sent again, recounted those of them
		// the backend reported as new.
		retries, recounted atomic.Int64
		offers, refused    atomic.Int64
	}
	next atomic.Int64
}

// scratch is one client's reused buffers.
type scratch struct {
	hist   History
	offers []Offer
	// seen and capped count the user's impressions of each campaign in
	// the day and in its current cap window; touched lists the campaigns
	// to zero again.
	seen, capped []int32
	touched      []int
	lat          []time.Duration
	// histPoints sums the impressions the history reads returned.
	histPoints int64
}

// serve runs the day's requests on b, cfg.clients at a time, then checks
// b's state.
func serve(ctx context.Context, log *slog.Logger, b Backend, name string, cat *Catalog, w *Workload, cfg runConfig) (RunResult, error) {
	res := RunResult{Backend: name, Decisions: len(w.Users)}
	if err := b.Reset(ctx); err != nil {
		return res, fmt.Errorf("%s: reset: %w", name, err)
	}
	n := len(cat.Campaigns)
	r := &runner{b: b, cat: cat, w: w, cfg: cfg, spend: make([]atomic.Int64, n)}
	r.tally.imps = make([]atomic.Int64, n)
	r.tally.charges = make([]atomic.Int64, n)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var bg sync.WaitGroup
	stop := make(chan struct{})
	bg.Go(func() { r.refreshSpend(ctx, cancel, stop) })
	bg.Go(func() { r.logProgress(log, name, stop) })

	scratches := make([]*scratch, cfg.clients)
	var clients sync.WaitGroup
	serverCPUNow := func() time.Duration {
		if cfg.serverPID == 0 {
			return 0
		}
		d, err := processCPU(cfg.serverPID)
		if err != nil {
			log.Warn("server CPU time", "err", err)
		}
		return d
	}
	serverCPU0, clientCPU0 := serverCPUNow(), selfCPU()
	start := time.Now()
	for k := range scratches {
		s := &scratch{seen: make([]int32, n), capped: make([]int32, n), lat: make([]time.Duration, 0, len(w.Users)/cfg.clients+1)}
		scratches[k] = s
		clients.Go(func() {
			for {
				i := int(r.next.Add(1) - 1)
				if i >= len(w.Users) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				if err := r.decide(ctx, i, s); err != nil {
					cancel(fmt.Errorf("%s: request %d: %w", name, i, err))
					return
				}
				s.lat = append(s.lat, time.Since(t0))
			}
		})
	}
	clients.Wait()
	elapsed := time.Since(start)
	clientCPU, serverCPU := selfCPU()-clientCPU0, max(0, serverCPUNow()-serverCPU0)
	close(stop)
	bg.Wait()
	if err := context.Cause(ctx); err != nil {
		return res, err
	}

	var lat []time.Duration
	for _, s := range scratches {
		lat = append(lat, s.lat...)
	}
	slices.Sort(lat)
	res.Seconds = elapsed.Seconds()
	res.PerSecond = float64(len(w.Users)) / elapsed.Seconds()
	res.P50us = percentile(lat, 0.50)
	res.P99us = percentile(lat, 0.99)
	perDecision := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(len(w.Users)) }
	if res.ClientCPUus = perDecision(clientCPU); res.ClientCPUus > 0 {
		res.ClientBoundPerS = 1e6 / res.ClientCPUus
	}
	if res.ServerCPUus = perDecision(serverCPU); res.ServerCPUus > 0 {
		res.ServerBoundPerS = 1e6 / res.ServerCPUus
	}
	tally := &Tally{Imps: make([]int64, n), Charges: make([]int64, n)}
	for c := range n {
		tally.Imps[c] = r.tally.imps[c].Load()
		tally.Charges[c] = r.tally.charges[c].Load()
		res.Impressions += tally.Imps[c]
	}
	tally.Clicks = r.tally.clicks.Load()
	tally.Retries, tally.RetriesCounted = r.tally.retries.Load(), r.tally.recounted.Load()
	res.Clicks, res.Retries = tally.Clicks, tally.Retries
	res.Offers, res.Refused = r.tally.offers.Load(), r.tally.refused.Load()
	res.FillRate = float64(res.Impressions) / float64(len(w.Users))
	var points int64
	for _, s := range scratches {
		points += s.histPoints
	}
	res.HistoryPoints = float64(points) / float64(len(w.Users))
	if cfg.noCheck {
		return res, nil
	}

	checked := time.Now()
	log.Info("checking the invariants", "backend", name, "users", w.NumUsers, "campaigns", n)
	st, err := b.State(ctx, w.NumUsers, n)
	if err != nil {
		return res, fmt.Errorf("%s: state: %w", name, err)
	}
	res.Invariants = Check(cat, st, tally)
	res.CheckSeconds = time.Since(checked).Seconds()
	return res, nil
}

// percentile is the q-quantile of sorted d, in microseconds.
func percentile(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	i := min(int(q*float64(len(d))), len(d)-1)
	return float64(d[i].Nanoseconds()) / 1e3
}

// decide serves request i: target, filter by budget, pacing and caps,
// rank by eCPM, take the best offer the backend grants, record the
// impression and, when the user clicks, the click.
func (r *runner) decide(ctx context.Context, i int, s *scratch) error {
	cat, w := r.cat, r.w
	u, at := int(w.Users[i]), w.At(i)
	cands := cat.Candidates(int(w.Topics[i]), cat.Segment(u))
	if err := r.b.History(ctx, u, at, &s.hist); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	f := Features{Clicks24h: s.hist.Clicks}
	s.histPoints += int64(len(s.hist.Imps))
	for _, imp := range s.hist.Imps {
		if imp.Campaign < 0 || imp.Campaign >= len(cat.Campaigns) {
			return fmt.Errorf("%w: impression of campaign %d", ErrReply, imp.Campaign)
		}
		if imp.At > at-dayMs {
			f.Imps24h++
		}
		if imp.At > at-hourMs {
			f.Imps1h++
		}
		c := &cat.Campaigns[imp.Campaign]
		if s.seen[imp.Campaign] == 0 {
			s.touched = append(s.touched, imp.Campaign)
		}
		s.seen[imp.Campaign]++
		if c.CapWindow(imp.At) == c.CapWindow(at) {
			s.capped[imp.Campaign]++
		}
	}
	offers := s.offers[:0]
	for _, id := range cands {
		c := &cat.Campaigns[id]
		if int(s.capped[id]) >= c.CapN {
			continue
		}
		pctr := PCTR(c.BaseCTR, f, int(s.seen[id]))
		charge, limit := Charge(c.Bid, pctr), c.Limit(at)
		if r.spend[id].Load()+charge > limit {
			continue // exhausted, or ahead of its plan
		}
		offers = append(offers, Offer{
			Campaign: int(id), ECPM: ECPM(c.Bid, pctr), Charge: charge, Limit: limit,
			CapN: c.CapN, CapWindow: c.CapWindow(at),
		})
	}
	Rank(offers)
	if len(offers) > r.cfg.maxOffers {
		offers = offers[:r.cfg.maxOffers]
	}
	s.offers = offers
	if len(offers) > 0 {
		// The best offer's charge counts in the filter's view while
		// its take is in flight, so that the other clients do not all
		// go for the same room under a campaign's limit.
		r.spend[offers[0].Campaign].Add(offers[0].Charge)
	}
	won, tried, err := r.b.Take(ctx, u, at, offers)
	if err != nil {
		return fmt.Errorf("take: %w", err)
	}
	if won != 0 && len(offers) > 0 {
		r.spend[offers[0].Campaign].Add(-offers[0].Charge)
	}
	r.tally.offers.Add(int64(tried))
	if won < 0 {
		r.tally.refused.Add(int64(tried))
		r.clear(s)
		return nil
	}
	r.tally.refused.Add(int64(tried - 1))
	o := &offers[won]
	if won != 0 {
		r.spend[o.Campaign].Add(o.Charge)
	}
	imp := Imp{At: at, Campaign: o.Campaign, Charge: o.Charge}
	if err := r.record(ctx, Event{User: u, Imp: imp}, i, drawRetryImp); err != nil {
		return err
	}
	r.tally.imps[o.Campaign].Add(1)
	r.tally.charges[o.Campaign].Add(o.Charge)
	c := &cat.Campaigns[o.Campaign]
	ctr := c.BaseCTR * cat.Affinity(u) / (1 + repeatFadeTo*float64(s.seen[o.Campaign]))
	r.clear(s)
	if w.draw(i, drawClick) < ctr {
		if err := r.record(ctx, Event{Click: true, User: u, Imp: imp}, i, drawRetryClick); err != nil {
			return err
		}
		r.tally.clicks.Add(1)
	}
	return nil
}

// clear zeroes the per-campaign counts of s.
func (r *runner) clear(s *scratch) {
	for _, c := range s.touched {
		s.seen[c], s.capped[c] = 0, 0
	}
	s.touched = s.touched[:0]
}

// record records ev and, for a share cfg.retry of events, sends it again
// as a client would after a lost reply: the store must count it once.
func (r *runner) record(ctx context.Context, ev Event, i int, retry uint64) error {
	ok, err := r.b.Record(ctx, ev)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if !ok {
		return fmt.Errorf("record: a new event (user %d at %d, click %t) was taken for a retry", ev.User, ev.Imp.At, ev.Click)
	}
	if r.w.draw(i, retry) >= r.cfg.retry {
		return nil
	}
	again, err := r.b.Record(ctx, ev)
	if err != nil {
		return fmt.Errorf("record retry: %w", err)
	}
	r.tally.retries.Add(1)
	if again {
		r.tally.recounted.Add(1)
	}
	return nil
}

// refreshSpend keeps r.spend at the backend's spend until stop closes; a
// failed read ends the run.
func (r *runner) refreshSpend(ctx context.Context, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	buf := make([]int64, len(r.spend))
	t := time.NewTicker(r.cfg.refresh)
	defer t.Stop()
	for {
		if err := r.b.Spend(ctx, buf); err != nil {
			if ctx.Err() == nil {
				cancel(fmt.Errorf("spend: %w", err))
			}
			return
		}
		for c, v := range buf {
			// Never below what this process charged since the read
			// was sent: spend only grows.
			for cur := r.spend[c].Load(); v > cur && !r.spend[c].CompareAndSwap(cur, v); cur = r.spend[c].Load() {
			}
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// logProgress logs the requests served so far every cfg.progress until
// stop closes.
func (r *runner) logProgress(log *slog.Logger, name string, stop <-chan struct{}) {
	t := time.NewTicker(r.cfg.progress)
	defer t.Stop()
	start, total := time.Now(), len(r.w.Users)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			done := min(int(r.next.Load()), total)
			log.Info("serving", "backend", name, "done", done, "of", total,
				"decisions_per_s", int(float64(done)/time.Since(start).Seconds()))
		}
	}
}
