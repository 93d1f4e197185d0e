package flowhttp

import (
	"context"
	"net/http"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// claimBody is POST /flows/claim (FLOW.CLAIM_DUE, and with only_expired
// FLOW.RECLAIM).
type claimBody struct {
	Type string `json:"type"`
	// State is the state claimed from; queued when absent.
	State   string `json:"state"`
	Worker  string `json:"worker"`
	LeaseMs int64  `json:"lease_ms"`
	// Limit is how many flows at most; 1 when absent.
	Limit *int64 `json:"limit"`
	// Priority and PartitionKey, when given, claim only those flows.
	Priority     *int64  `json:"priority"`
	PartitionKey *string `json:"partition_key"`
	// BlockMs, when positive, waits that long (at most Options.MaxBlock)
	// for a flow when none is due; 0 does not wait.
	BlockMs        int64 `json:"block_ms"`
	ReclaimExpired bool  `json:"reclaim_expired"`
	OnlyExpired    bool  `json:"only_expired"`
}

// claim serves POST /flows/claim: {"flows": [...]}, empty when none came.
// A waiting claim ends early when its request does; flows it was given
// by then are the request's, and their leases run out if nobody reads
// the answer.
func (h *handler) claim(w http.ResponseWriter, r *http.Request) {
	var b claimBody
	if err := decodeBody(r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	if b.BlockMs < 0 {
		h.fail(w, r, invalid("block_ms must not be negative"))
		return
	}
	c := flow.Claim{
		Type: b.Type, State: b.State, Worker: b.Worker, LeaseMs: b.LeaseMs, Limit: 1,
		ReclaimExpired: b.ReclaimExpired, OnlyExpired: b.OnlyExpired,
	}
	if c.State == "" {
		c.State = flow.Queued
	}
	if b.Limit != nil {
		// Out of range stays out of range, for the table to refuse.
		c.Limit = int(min(max(*b.Limit, -1), flow.MaxClaimLimit+1))
	}
	if b.Priority != nil {
		c.Priority, c.HasPriority = *b.Priority, true
	}
	if b.PartitionKey != nil {
		c.Partition, c.HasPartition = *b.PartitionKey, true
	}
	var rs []flow.Record
	var err error
	if b.BlockMs == 0 {
		rs, err = h.fl.Claim(r.Context(), c)
	} else {
		wait := h.maxBlock
		if b.BlockMs < int64(wait/time.Millisecond) {
			wait = time.Duration(b.BlockMs) * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		rs, err = h.fl.ClaimWait(ctx, c)
		cancel()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Flows []recordJSON `json:"flows"`
	}{records(rs)})
}
