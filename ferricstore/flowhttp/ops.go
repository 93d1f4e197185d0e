package flowhttp

import "github.com/temporalstore/temporalstore-go/ferricstore/flow"

// commandBody is the body of a call on one flow, also an item of a
// batch: it names its flow (id, which the path gives outside batches)
// and reads into the flow command.
type commandBody interface {
	flowID() *string
	command() (flow.Command, error)
}

// oneOps are the calls of POST /flows/{id}/{op}; a batch takes these and
// create.
var oneOps = map[string]func() commandBody{
	"complete":     func() commandBody { return new(completeBody) },
	"fail":         func() commandBody { return new(failBody) },
	"retry":        func() commandBody { return new(retryBody) },
	"cancel":       func() commandBody { return new(cancelBody) },
	"extend_lease": func() commandBody { return new(extendBody) },
	"transition":   func() commandBody { return new(transitionBody) },
	"rewind":       func() commandBody { return new(rewindBody) },
}

// leaseArgs are the lease a call is made under.
func leaseArgs(token *string, fencing *uint64) (string, uint64, error) {
	switch {
	case token == nil:
		return "", 0, required("lease_token")
	case fencing == nil:
		return "", 0, required("fencing_token")
	}
	return *token, *fencing, nil
}

// completeBody is POST /flows/{id}/complete (FLOW.COMPLETE).
type completeBody struct {
	ID           string  `json:"id"`
	LeaseToken   *string `json:"lease_token"`
	FencingToken *uint64 `json:"fencing_token"`
	Result       *string `json:"result"`
	ResultBase64 *string `json:"result_base64"`
}

func (b *completeBody) flowID() *string { return &b.ID }

func (b *completeBody) command() (flow.Command, error) {
	c := &flow.Complete{ID: b.ID}
	var err error
	if c.LeaseToken, c.Fencing, err = leaseArgs(b.LeaseToken, b.FencingToken); err != nil {
		return nil, err
	}
	c.Result, _, err = bytesArg("result", b.Result, b.ResultBase64)
	return c, err
}

// failBody is POST /flows/{id}/fail (FLOW.FAIL).
type failBody struct {
	ID           string  `json:"id"`
	LeaseToken   *string `json:"lease_token"`
	FencingToken *uint64 `json:"fencing_token"`
	Error        *string `json:"error"`
	ErrorBase64  *string `json:"error_base64"`
}

func (b *failBody) flowID() *string { return &b.ID }

func (b *failBody) command() (flow.Command, error) {
	c := &flow.Fail{ID: b.ID}
	var err error
	if c.LeaseToken, c.Fencing, err = leaseArgs(b.LeaseToken, b.FencingToken); err != nil {
		return nil, err
	}
	c.Error, _, err = bytesArg("error", b.Error, b.ErrorBase64)
	return c, err
}

// retryBody is POST /flows/{id}/retry (FLOW.RETRY).
type retryBody struct {
	ID           string  `json:"id"`
	LeaseToken   *string `json:"lease_token"`
	FencingToken *uint64 `json:"fencing_token"`
	Error        *string `json:"error"`
	ErrorBase64  *string `json:"error_base64"`
	// RunAtMs replaces the backoff's delay.
	RunAtMs *int64 `json:"run_at_ms"`
	// MaxRetries and ExhaustedTo override the policy for this call.
	MaxRetries  *int64  `json:"max_retries"`
	ExhaustedTo *string `json:"exhausted_to"`
}

func (b *retryBody) flowID() *string { return &b.ID }

func (b *retryBody) command() (flow.Command, error) {
	c := &flow.Retry{ID: b.ID}
	var err error
	if c.LeaseToken, c.Fencing, err = leaseArgs(b.LeaseToken, b.FencingToken); err != nil {
		return nil, err
	}
	if c.Error, _, err = bytesArg("error", b.Error, b.ErrorBase64); err != nil {
		return nil, err
	}
	if b.RunAtMs != nil {
		c.RunAtMs, c.HasRunAt = *b.RunAtMs, true
	}
	if b.MaxRetries != nil {
		c.Override.MaxRetries = *b.MaxRetries
		c.Override.Set |= flow.SetMaxRetries
	}
	if b.ExhaustedTo != nil {
		c.Override.ExhaustedTo = *b.ExhaustedTo
		c.Override.Set |= flow.SetExhaustedTo
	}
	return c, nil
}

// cancelBody is POST /flows/{id}/cancel (FLOW.CANCEL); a running flow
// needs its lease.
type cancelBody struct {
	ID           string  `json:"id"`
	LeaseToken   string  `json:"lease_token"`
	FencingToken uint64  `json:"fencing_token"`
	Reason       *string `json:"reason"`
	ReasonBase64 *string `json:"reason_base64"`
}

func (b *cancelBody) flowID() *string { return &b.ID }

func (b *cancelBody) command() (flow.Command, error) {
	reason, _, err := bytesArg("reason", b.Reason, b.ReasonBase64)
	if err != nil {
		return nil, err
	}
	return &flow.Cancel{ID: b.ID, LeaseToken: b.LeaseToken, Fencing: b.FencingToken, Reason: reason}, nil
}

// extendBody is POST /flows/{id}/extend_lease (FLOW.EXTEND_LEASE).
type extendBody struct {
	ID           string  `json:"id"`
	LeaseToken   *string `json:"lease_token"`
	FencingToken *uint64 `json:"fencing_token"`
	LeaseMs      *int64  `json:"lease_ms"`
}

func (b *extendBody) flowID() *string { return &b.ID }

func (b *extendBody) command() (flow.Command, error) {
	c := &flow.ExtendLease{ID: b.ID}
	var err error
	if c.LeaseToken, c.Fencing, err = leaseArgs(b.LeaseToken, b.FencingToken); err != nil {
		return nil, err
	}
	if b.LeaseMs == nil {
		return nil, required("lease_ms")
	}
	c.LeaseMs = *b.LeaseMs
	return c, nil
}

// transitionBody is POST /flows/{id}/transition (FLOW.TRANSITION): the
// lease token when the flow is running, its fencing token always.
type transitionBody struct {
	ID            string  `json:"id"`
	From          string  `json:"from"`
	To            string  `json:"to"`
	LeaseToken    string  `json:"lease_token"`
	FencingToken  *uint64 `json:"fencing_token"`
	RunAtMs       *int64  `json:"run_at_ms"`
	Priority      *int64  `json:"priority"`
	Payload       *string `json:"payload"`
	PayloadBase64 *string `json:"payload_base64"`
}

func (b *transitionBody) flowID() *string { return &b.ID }

func (b *transitionBody) command() (flow.Command, error) {
	switch {
	case b.From == "":
		return nil, required("from")
	case b.To == "":
		return nil, required("to")
	case b.FencingToken == nil:
		return nil, required("fencing_token")
	}
	c := &flow.Transition{ID: b.ID, From: b.From, To: b.To, LeaseToken: b.LeaseToken, Fencing: *b.FencingToken}
	if b.RunAtMs != nil {
		c.RunAtMs, c.HasRunAt = *b.RunAtMs, true
	}
	if b.Priority != nil {
		c.Priority, c.HasPriority = *b.Priority, true
	}
	var err error
	c.Payload, c.HasPayload, err = bytesArg("payload", b.Payload, b.PayloadBase64)
	return c, err
}

// rewindBody is POST /flows/{id}/rewind (FLOW.REWIND): to is queued when
// absent.
type rewindBody struct {
	ID string `json:"id"`
	To string `json:"to"`
}

func (b *rewindBody) flowID() *string { return &b.ID }

func (b *rewindBody) command() (flow.Command, error) {
	return &flow.Rewind{ID: b.ID, To: b.To}, nil
}
