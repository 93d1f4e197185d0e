package memory

import (
	"encoding/json"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixark"
)

// NoIdentifierMessage is mem0's message for a request that names no scope.
const NoIdentifierMessage = "At least one identifier (user_id, agent_id, run_id) is required."

// ErrNoIdentifier is a request with none of user_id, agent_id and run_id.
// It is a matrixark.ErrInvalid.
var ErrNoIdentifier = fmt.Errorf("%w: %s", matrixark.ErrInvalid, NoIdentifierMessage)

// History events.
const (
	EventAdd    = "ADD"
	EventUpdate = "UPDATE"
	EventDelete = "DELETE"
)

// Limits of a request, beyond the Engine's.
const (
	DefaultGetAllLimit = 100 // GetAll without a limit
	DefaultSearchLimit = 20  // Search without a limit (mem0's top_k)
)

// Scope is whose a memory is: mem0's user_id, agent_id and run_id, the
// Engine's user, agent and session. Ids are trimmed; an id that is blank
// after trimming, or holds whitespace or a colon, is invalid.
type Scope struct {
	UserID  string `json:"user_id,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
	RunID   string `json:"run_id,omitempty"`
}

// Message is one message to remember.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Name is the speaker, kept as the memory's actor_id.
	Name string `json:"name,omitempty"`
}

// AddRequest is what Add remembers.
type AddRequest struct {
	Messages []Message
	Scope
	// Metadata is kept with every memory of the request, without its id
	// keys (user_id, agent_id, run_id, actor_id).
	Metadata map[string]any
	// Infer drops a text already remembered in the scope, or repeated in
	// the request, by its md5 (mem0 v2's ADD-only inference, without an
	// LLM). Without it every message is stored.
	Infer bool
	// ExpirationDate is "YYYY-MM-DD" (visible through that day, UTC) or an
	// RFC 3339 time; empty: never expires.
	ExpirationDate string
	// TimestampMs is the memory's creation and event time; 0: now.
	TimestampMs int64
}

// Result is one memory Add stored.
type Result struct {
	ID      string
	Memory  string
	Event   string // EventAdd
	ActorID string
	Role    string
}

// MarshalJSON writes mem0's shape: actor_id and role are null when unset.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID      string  `json:"id"`
		Memory  string  `json:"memory"`
		Event   string  `json:"event"`
		ActorID *string `json:"actor_id"`
		Role    *string `json:"role"`
	}{r.ID, r.Memory, r.Event, nullable(r.ActorID), nullable(r.Role)})
}

// Item is a memory as mem0 returns it.
type Item struct {
	ID     string `json:"id"` // a v4 UUID
	Memory string `json:"memory"`
	Hash   string `json:"hash"` // md5 of Memory, hex
	// Metadata is null when the memory has none.
	Metadata  map[string]any `json:"metadata"`
	CreatedAt string         `json:"created_at"` // ISO-8601, UTC
	UpdatedAt string         `json:"updated_at"`
	UserID    string         `json:"user_id,omitempty"`
	AgentID   string         `json:"agent_id,omitempty"`
	RunID     string         `json:"run_id,omitempty"`
	ActorID   string         `json:"actor_id,omitempty"`
	Role      string         `json:"role,omitempty"`
	// Score is set by Search only.
	Score *float64 `json:"score,omitempty"`
}

// HistoryRow is one change of a memory.
type HistoryRow struct {
	ID        string // a v4 UUID
	MemoryID  string
	OldMemory string // empty for ADD
	NewMemory string // empty for DELETE
	Event     string // EventAdd, EventUpdate or EventDelete
	CreatedAt string // the memory's created_at
	UpdatedAt string // when an UPDATE or DELETE happened; empty for ADD
	IsDeleted bool
	ActorID   string
	Role      string
}

// historyWire is a HistoryRow as mem0 writes it: empty strings are null.
type historyWire struct {
	ID        string  `json:"id"`
	MemoryID  string  `json:"memory_id"`
	OldMemory *string `json:"old_memory"`
	NewMemory *string `json:"new_memory"`
	Event     string  `json:"event"`
	CreatedAt *string `json:"created_at"`
	UpdatedAt *string `json:"updated_at"`
	IsDeleted bool    `json:"is_deleted"`
	ActorID   *string `json:"actor_id"`
	Role      *string `json:"role"`
}

// MarshalJSON writes mem0's row: empty strings are null.
func (h HistoryRow) MarshalJSON() ([]byte, error) {
	return json.Marshal(historyWire{h.ID, h.MemoryID, nullable(h.OldMemory), nullable(h.NewMemory), h.Event, nullable(h.CreatedAt),
		nullable(h.UpdatedAt), h.IsDeleted, nullable(h.ActorID), nullable(h.Role)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (h *HistoryRow) UnmarshalJSON(b []byte) error {
	var w historyWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*h = HistoryRow{ID: w.ID, MemoryID: w.MemoryID, OldMemory: deref(w.OldMemory), NewMemory: deref(w.NewMemory),
		Event: w.Event, CreatedAt: deref(w.CreatedAt), UpdatedAt: deref(w.UpdatedAt), IsDeleted: w.IsDeleted,
		ActorID: deref(w.ActorID), Role: deref(w.Role)}
	return nil
}

// Filter selects memories: a scope and mem0's filters, ANDed.
type Filter struct {
	Scope
	// Filters are mem0's filters: user_id, agent_id and run_id (a Scope
	// id given as well wins), actor_id, role, and metadata keys, each
	// compared for equality with the value given (an object or a list
	// compares whole; operators such as {"in": …} are not interpreted).
	Filters map[string]any
	// Limit bounds the memories returned (GetAll default 100, Search
	// default 20, at most 1,000).
	Limit int
	// ShowExpired returns expired memories too.
	ShowExpired bool
}

// SearchRequest is a Search.
type SearchRequest struct {
	Query string
	Filter
	// Threshold drops memories scoring below it (default 0: none).
	Threshold float64
}

// UpdateRequest is an Update; nil fields keep their value.
type UpdateRequest struct {
	// Text replaces the memory's text; it is re-ingested.
	Text *string
	// Metadata replaces the memory's metadata (an empty map clears it).
	Metadata map[string]any
	// ExpirationDate sets the expiry as AddRequest's does; "" clears it.
	ExpirationDate *string
}

// record is an item as stored: the item, the Engine node its text lives
// in, and its expiry.
type record struct {
	Item
	Node      uint64 `json:"node"`
	ExpiresMs int64  `json:"expires_ms,omitempty"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
