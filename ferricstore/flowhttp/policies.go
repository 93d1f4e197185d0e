package flowhttp

import (
	"net/http"
	"strings"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// policyBody is PUT /flows/policies/{type}[?state=s]
// (FLOW.POLICY.SET): the fields given are set, the others stay as they
// were.
type policyBody struct {
	MaxRetries *int64 `json:"max_retries"`
	// Backoff is none, fixed, linear or exponential.
	Backoff     *string `json:"backoff"`
	BaseMs      *int64  `json:"base_ms"`
	MaxMs       *int64  `json:"max_ms"`
	JitterPct   *int64  `json:"jitter_pct"`
	ExhaustedTo *string `json:"exhausted_to"`
	// Mode is fifo or parallel.
	Mode *string `json:"mode"`
	// MaxActiveMs is a number of ms, or "infinity" for no bound.
	MaxActiveMs *maxActive `json:"max_active_ms"`
	// ExpectedGeneration makes the change conditional on the policy's
	// generation (0 for one never set): policy_generation otherwise.
	ExpectedGeneration *uint64 `json:"expected_generation"`
}

func (b *policyBody) command(typ, state string) (flow.SetPolicy, error) {
	sp := flow.SetPolicy{Type: typ, State: state}
	p := &sp.Policy
	if b.MaxRetries != nil {
		p.MaxRetries, p.Set = *b.MaxRetries, p.Set|flow.SetMaxRetries
	}
	if b.Backoff != nil {
		var ok bool
		if p.Backoff, ok = flow.ParseBackoff(*b.Backoff); !ok {
			return sp, invalid("backoff must be none, fixed, linear or exponential")
		}
		p.Set |= flow.SetBackoff
	}
	if b.BaseMs != nil {
		p.BaseMs, p.Set = *b.BaseMs, p.Set|flow.SetBaseMs
	}
	if b.MaxMs != nil {
		p.MaxMs, p.Set = *b.MaxMs, p.Set|flow.SetMaxMs
	}
	if b.JitterPct != nil {
		p.JitterPct, p.Set = *b.JitterPct, p.Set|flow.SetJitterPct
	}
	if b.ExhaustedTo != nil {
		p.ExhaustedTo, p.Set = *b.ExhaustedTo, p.Set|flow.SetExhaustedTo
	}
	if b.Mode != nil {
		switch strings.ToLower(*b.Mode) {
		case "fifo":
			p.Mode = flow.FIFO
		case "parallel":
			p.Mode = flow.Parallel
		default:
			return sp, invalid("mode must be fifo or parallel")
		}
		p.Set |= flow.SetMode
	}
	if m := b.MaxActiveMs; m != nil {
		// A policy's 0 is no bound.
		if !m.Inf && m.Ms <= 0 {
			return sp, invalid("max_active_ms must be positive or \"infinity\"")
		}
		p.MaxActiveMs, p.Set = m.Ms, p.Set|flow.SetMaxActiveMs
	}
	if b.ExpectedGeneration != nil {
		sp.ExpectedGeneration, sp.HasExpected = *b.ExpectedGeneration, true
	}
	if p.Set == 0 {
		return sp, invalid("a policy change sets at least one field")
	}
	return sp, nil
}

// setPolicy serves PUT /flows/policies/{type}: the policy now in force,
// as getPolicy answers it.
func (h *handler) setPolicy(w http.ResponseWriter, r *http.Request) {
	var b policyBody
	if err := decodeBody(r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	typ, state := r.PathValue("type"), r.URL.Query().Get("state")
	sp, err := b.command(typ, state)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	own, err := h.fl.SetPolicy(r.Context(), sp)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, policy(h.fl.Effective(r.Context(), typ, state), own))
}

// getPolicy serves GET /flows/policies/{type}[?state=s] (FLOW.POLICY.GET):
// the policy in force (the defaults, the type's, then the state's) and the
// generation of the type's (or state's) own, 0 when never set.
func (h *handler) getPolicy(w http.ResponseWriter, r *http.Request) {
	typ, state := r.PathValue("type"), r.URL.Query().Get("state")
	own, _, err := h.fl.Policy(r.Context(), typ, state)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, policy(h.fl.Effective(r.Context(), typ, state), own))
}
