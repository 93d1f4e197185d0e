package matrixark

import "fmt"

// Kind is what a node was made from.
type Kind int

// Node kinds, numbered as in the original (a node's hash covers its kind's
// index from 0).
const (
	KindDoc Kind = 1 + iota
	KindChat
	KindTicket
	KindCode
	KindIncident
	KindUserEvent
)

var kindNames = map[Kind]string{KindDoc: "doc", KindChat: "chat", KindTicket: "ticket", KindCode: "code",
	KindIncident: "incident", KindUserEvent: "user_event"}

func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ParseKind is the Kind of a name (doc, chat, ...).
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: kind %q: doc, chat, ticket, code, incident or user_event", ErrInvalid, s)
}

// Record types of a block.
const (
	RecordRawMessage   = "raw_message"   // a message or an event, whole (L2)
	RecordMatchedChunk = "matched_chunk" // a document's chunk (L2), or a node's summary (L0, L1)
	RecordEntity       = "entity"
)

// Node is one source's summary record: a document, a session's messages,
// an event. Its vectors are stored inline, so a ranked node needs no
// second read to be scored.
type Node struct {
	Hash          uint64    `json:"hash"`
	Parent        uint64    `json:"parent,omitempty"`
	Kind          Kind      `json:"kind"`
	CanonicalName string    `json:"canonical_name"`
	L0            string    `json:"l0"`
	L1            string    `json:"l1,omitempty"`
	LastEventMs   int64     `json:"last_event_time_ms"`
	SourceRef     string    `json:"source_ref"`
	User          string    `json:"user,omitempty"`
	Session       string    `json:"session,omitempty"`
	Agent         string    `json:"agent,omitempty"`
	FirstEventMs  int64     `json:"first_event_time_ms"`
	Events        uint32    `json:"events"`
	VecL0         []float32 `json:"vec_l0,omitempty"`
	VecL1         []float32 `json:"vec_l1,omitempty"`
	// EmbedDirty marks a node stored without its vectors (the provider
	// failed or its Space declined them): lexically rankable until a
	// re-embed.
	EmbedDirty bool `json:"embed_dirty,omitempty"`
}

// Event is one L2 record of a node: a message, an event, a chunk.
type Event struct {
	ID          uint64    `json:"id"`
	Node        uint64    `json:"node"`
	EventMs     int64     `json:"event_time_ms"`
	IngestMs    int64     `json:"ingestion_time_ms"`
	Seq         uint32    `json:"seq"`
	Type        string    `json:"type,omitempty"`
	Role        string    `json:"role,omitempty"`
	ActorID     string    `json:"actor_id,omitempty"`
	Confidence  float64   `json:"confidence"`
	Importance  float64   `json:"importance"`
	Text        string    `json:"text"`
	SourceRef   string    `json:"source_ref"`
	RecordType  string    `json:"record_type"`
	Vec         []float32 `json:"vec,omitempty"`
	ExpiresAtMs int64     `json:"expires_at_ms,omitempty"`
}

// EntityRecord is an entity a node's texts name, with where it was seen.
type EntityRecord struct {
	Hash       uint64   `json:"hash"`
	Node       uint64   `json:"node"`
	Type       string   `json:"type"`
	Name       string   `json:"name"`
	Value      string   `json:"value,omitempty"`
	UpdatedMs  int64    `json:"updated_ms"`
	ValidFrom  int64    `json:"valid_from_ms"`
	Confidence float64  `json:"confidence"`
	Sources    []string `json:"sources,omitempty"`
}

// MaxEntitySources bounds an entity's source list; the oldest go first.
const MaxEntitySources = 512
