package flowhttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// The answers' shapes. Field names are the RESP replies' (FLOW.GET,
// FLOW.HISTORY, FLOW.POLICY.GET, FLOW.SCHEDULE.GET, FLOW.STATS); a name
// whose RESP value is null when empty is null here too.

// recordJSON is a flow's record.
type recordJSON struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	State        string  `json:"state"`
	PartitionKey *string `json:"partition_key"`
	// A bytes field is name (a string, or null when unset) when its bytes
	// are UTF-8, and name_base64 otherwise: exactly one of the two.
	Payload         json.RawMessage `json:"payload,omitempty"`
	PayloadBase64   string          `json:"payload_base64,omitempty"`
	Result          json.RawMessage `json:"result,omitempty"`
	ResultBase64    string          `json:"result_base64,omitempty"`
	Error           json.RawMessage `json:"error,omitempty"`
	ErrorBase64     string          `json:"error_base64,omitempty"`
	Version         uint64          `json:"version"`
	Attempts        int64           `json:"attempts"`
	Priority        int64           `json:"priority"`
	CreatedAtMs     int64           `json:"created_at_ms"`
	UpdatedAtMs     int64           `json:"updated_at_ms"`
	NextRunAtMs     int64           `json:"next_run_at_ms"`
	LeaseOwner      *string         `json:"lease_owner"`
	LeaseToken      *string         `json:"lease_token"`
	LeaseDeadlineMs int64           `json:"lease_deadline_ms"`
	FencingToken    uint64          `json:"fencing_token"`
	RunState        *string         `json:"run_state"`
	ParentFlowID    *string         `json:"parent_flow_id"`
	RootFlowID      *string         `json:"root_flow_id"`
	CorrelationID   *string         `json:"correlation_id"`
	Attributes      attrsJSON       `json:"attributes"`
	// MaxActiveMs is null when the flow's life is unbounded.
	MaxActiveMs *int64 `json:"max_active_ms"`
}

func record(r flow.Record) recordJSON {
	out := recordJSON{
		ID: r.ID, Type: r.Type, State: r.State, PartitionKey: opt(r.Partition),
		Version: r.Version, Attempts: r.Attempts, Priority: r.Priority,
		CreatedAtMs: r.CreatedMs, UpdatedAtMs: r.UpdatedMs, NextRunAtMs: r.NextRunAtMs,
		LeaseOwner: opt(r.LeaseOwner), LeaseToken: opt(r.LeaseToken), LeaseDeadlineMs: r.LeaseDeadlineMs,
		FencingToken: r.Fencing, RunState: opt(r.RunState),
		ParentFlowID: opt(r.ParentID), RootFlowID: opt(r.RootID), CorrelationID: opt(r.CorrelationID),
		Attributes: r.Attributes,
	}
	out.Payload, out.PayloadBase64 = bytesOut(r.Payload)
	out.Result, out.ResultBase64 = bytesOut(r.Result)
	out.Error, out.ErrorBase64 = bytesOut(r.Error)
	if r.MaxActiveMs != 0 {
		out.MaxActiveMs = &r.MaxActiveMs
	}
	return out
}

func records(rs []flow.Record) []recordJSON {
	out := make([]recordJSON, len(rs))
	for i, r := range rs {
		out[i] = record(r)
	}
	return out
}

// opt is s, or nil (null) when empty.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// bytesOut is a bytes field's two forms: null for nil, the string when b
// is UTF-8, else base64.
func bytesOut(b []byte) (json.RawMessage, string) {
	switch {
	case b == nil:
		return json.RawMessage("null"), ""
	case utf8.Valid(b):
		return jsonString(string(b)), ""
	}
	return nil, base64.StdEncoding.EncodeToString(b)
}

// jsonString is s as a JSON string, with <, > and & as they are, as
// writeJSON writes the rest of an answer.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// attrsJSON is a record's attributes as an object, in the record's
// order.
type attrsJSON []flow.Attr

func (a attrsJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(kv.Key))
		b.WriteByte(':')
		b.Write(jsonString(kv.Value))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// eventJSON is one event of a flow's history.
type eventJSON struct {
	ID           string  `json:"id"`
	Event        string  `json:"event"`
	From         *string `json:"from"`
	To           *string `json:"to"`
	Worker       *string `json:"worker"`
	FencingToken uint64  `json:"fencing_token"`
	Version      uint64  `json:"version"`
	Detail       *string `json:"detail"`
	AtMs         int64   `json:"at_ms"`
}

func events(es []flow.Event) []eventJSON {
	out := make([]eventJSON, len(es))
	for i, e := range es {
		out[i] = eventJSON{
			ID: e.ID, Event: e.Kind, From: opt(e.From), To: opt(e.To), Worker: opt(e.Worker),
			FencingToken: e.Fencing, Version: e.Version, Detail: opt(e.Detail), AtMs: e.Ms,
		}
	}
	return out
}

// policyJSON is the policy in force for a type (or a type's state), and
// the generation of the type's (or state's) own policy.
type policyJSON struct {
	MaxRetries  int64  `json:"max_retries"`
	Backoff     string `json:"backoff"`
	BaseMs      int64  `json:"base_ms"`
	MaxMs       int64  `json:"max_ms"`
	JitterPct   int64  `json:"jitter_pct"`
	ExhaustedTo string `json:"exhausted_to"`
	Mode        string `json:"mode"`
	// MaxActiveMs is a number of ms or "infinity".
	MaxActiveMs any    `json:"max_active_ms"`
	Generation  uint64 `json:"generation"`
	// SetFields are the fields the type's (or state's) own policy sets;
	// the others come from the level above.
	SetFields []string `json:"set_fields"`
}

// policyFields names the Policy.Set bits, in the order of the fields.
var policyFields = []struct {
	bit  uint16
	name string
}{
	{flow.SetMaxRetries, "max_retries"}, {flow.SetBackoff, "backoff"}, {flow.SetBaseMs, "base_ms"},
	{flow.SetMaxMs, "max_ms"}, {flow.SetJitterPct, "jitter_pct"}, {flow.SetExhaustedTo, "exhausted_to"},
	{flow.SetMode, "mode"}, {flow.SetMaxActiveMs, "max_active_ms"},
}

func policy(eff, own flow.Policy) policyJSON {
	out := policyJSON{
		MaxRetries: eff.MaxRetries, Backoff: eff.Backoff.String(), BaseMs: eff.BaseMs, MaxMs: eff.MaxMs,
		JitterPct: eff.JitterPct, ExhaustedTo: eff.ExhaustedTo, Mode: eff.Mode.String(),
		MaxActiveMs: "infinity", Generation: own.Generation, SetFields: []string{},
	}
	if eff.MaxActiveMs != 0 {
		out.MaxActiveMs = eff.MaxActiveMs
	}
	for _, f := range policyFields {
		if own.Set&f.bit != 0 {
			out.SetFields = append(out.SetFields, f.name)
		}
	}
	return out
}

// scheduleJSON is a schedule.
type scheduleJSON struct {
	Name          string          `json:"name"`
	Type          string          `json:"type"`
	State         string          `json:"state"`
	PartitionKey  *string         `json:"partition_key"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadBase64 string          `json:"payload_base64,omitempty"`
	Priority      int64           `json:"priority"`
	EveryMs       int64           `json:"every_ms"`
	NextDueMs     int64           `json:"next_due_ms"`
	Overlap       string          `json:"overlap"`
	Fired         uint64          `json:"fired"`
	Coalesced     uint64          `json:"coalesced"`
	Skipped       uint64          `json:"skipped"`
	LastTarget    *string         `json:"last_target"`
	// Status is active, done (a one-shot schedule that fired) or failed
	// (stopped by overlap fail_schedule).
	Status string `json:"status"`
}

func schedule(s flow.Schedule) scheduleJSON {
	out := scheduleJSON{
		Name: s.Name, Type: s.Type, State: s.State, PartitionKey: opt(s.Partition), Priority: s.Priority,
		EveryMs: s.EveryMs, NextDueMs: s.NextDueMs, Overlap: s.Overlap.String(),
		Fired: s.Fired, Coalesced: s.Coalesced, Skipped: s.Skipped, LastTarget: opt(s.LastTarget), Status: "active",
	}
	out.Payload, out.PayloadBase64 = bytesOut(s.Payload)
	switch {
	case s.Failed:
		out.Status = "failed"
	case s.Done:
		out.Status = "done"
	}
	return out
}

// countsJSON is GET /flows/stats.
type countsJSON struct {
	Waiting       int `json:"waiting"`
	Due           int `json:"due"`
	Running       int `json:"running"`
	ExpiredLeases int `json:"expired_leases"`
	Completed     int `json:"completed"`
	Failed        int `json:"failed"`
	Cancelled     int `json:"cancelled"`
	Schedules     int `json:"schedules"`
}
