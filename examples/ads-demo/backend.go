package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Backend is a store the decisions run against. A decision's methods
// (History, Take, Record) are one round trip each to the store, Take more
// when a backend falls through offer by offer; the decision logic around
// them is the same Go code for every backend. Methods are safe for
// concurrent use.
type Backend interface {
	// Reset empties the store for a new simulated day.
	Reset(ctx context.Context) error
	// Spend reads every campaign's spend so far into into (one per
	// campaign): the pacing filter's view, refreshed in the background.
	Spend(ctx context.Context, into []int64) error
	// History reads the user's impressions of the lookback window ending
	// at at, and the clicks of the day ending at at.
	History(ctx context.Context, user int, at int64, into *History) error
	// Take grants the first of the ranked offers whose cap slot and
	// budget charge are both taken, atomically: the cap's count stays
	// within CapN and the campaign's spend within Limit. It returns the
	// offer's index, or -1 when none was granted, and how many it tried.
	Take(ctx context.Context, user int, at int64, offers []Offer) (won, tried int, err error)
	// Record records an impression or click once: a retry of the same
	// event (same user, kind and time) reports false and changes nothing.
	Record(ctx context.Context, ev Event) (bool, error)
	// State reads what the store holds, for the invariant check.
	State(ctx context.Context, users, campaigns int) (*State, error)
	Close() error
}

// Imp is an impression: when, of which campaign, at what charge.
type Imp struct {
	At       int64
	Campaign int
	Charge   int64
}

// History is what the store holds about a user for a decision.
type History struct {
	// Imps are the user's impressions in the lookback window, in any
	// order.
	Imps []Imp
	// Clicks is the user's clicks in the day's window.
	Clicks int
	// raw is a backend's buffer for the reply.
	raw bytes.Buffer
}

// Event is an impression or a click on one; its identity is the user,
// the kind and the impression's time.
type Event struct {
	Click bool
	User  int
	Imp   Imp
}

// Bucket is a ledger bucket: spend in [Start, Start+bucketMs).
type Bucket struct {
	Start, Spend int64
}

// State is a store's state after a run.
type State struct {
	// Spend is each campaign's budget counter.
	Spend []int64
	// Ledger is each campaign's spend by bucket, in any order.
	Ledger [][]Bucket
	// Imps are each user's recorded impressions; Clicks each user's
	// recorded clicks.
	Imps   [][]Imp
	Clicks []int
}

func newState(users, campaigns int) *State {
	return &State{
		Spend:  make([]int64, campaigns),
		Ledger: make([][]Bucket, campaigns),
		Imps:   make([][]Imp, users),
		Clicks: make([]int, users),
	}
}

// ErrReply is returned for a store reply of an unexpected shape.
var ErrReply = errors.New("ads-demo: unexpected reply")

// ErrServer is returned for an error a store replied with.
var ErrServer = errors.New("ads-demo: server error")

// newClient is a go-redis client of a RESP backend, with a connection for
// each of conns clients. Its timeouts are generous: a state read pipelines
// thousands of commands.
func newClient(addr string, conns int) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: addr, Protocol: 2, PoolSize: conns, MinIdleConns: conns,
		DisableIdentity: true, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
	})
}

// Key names shared by the RESP backends.
func budgetKey(c int) string { return "ads:b:" + strconv.Itoa(c) }
func spendKey(c int) string  { return "ads:s:" + strconv.Itoa(c) }
func ledgerKey(c int) string { return "ads:l:" + strconv.Itoa(c) }
func impsKey(u int) string   { return "ads:i:" + strconv.Itoa(u) }
func clicksKey(u int) string { return "ads:k:" + strconv.Itoa(u) }

// capKey is the counter of the user's impressions of o's campaign in o's
// cap window.
func capKey(u int, o *Offer) string {
	b := make([]byte, 0, 40)
	b = append(b, "ads:q:"...)
	b = strconv.AppendInt(b, int64(u), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(o.Campaign), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, o.CapWindow, 10)
	return string(b)
}

// bucketOf is the ledger bucket of simulated time at.
func bucketOf(at int64) int64 { return at - (at-dayStart)%bucketMs }
