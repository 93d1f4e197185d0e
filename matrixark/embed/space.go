package embed

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// DeclinedMetric is the counter Spaces.Declined feeds, labelled by reason.
const DeclinedMetric = "matrixark_embedding_declined_total"

// Reasons a vector is declined, the label values of DeclinedMetric. They are
// kept apart because the causes differ: another width usually means an
// outage seeded fallback vectors; another encoder at the same width means
// the model was swapped.
const (
	ReasonWidth   = "width"
	ReasonEncoder = "encoder"
)

// Space is the vector space a tenant's vectors live in. Vectors from another
// width or encoder cannot be compared with it. Generation numbers the
// re-embeddings: switching model means re-embedding into a new generation
// and then making that generation the pinned one.
type Space struct {
	Dim        int
	EncoderID  uint64
	Generation uint64
}

// EncoderID identifies an embedding model: H64("embedding_model:"+model).
func EncoderID(model string) uint64 { return H64("embedding_model:" + model) }

// SpaceOf is the generation-0 Space of vectors described by info.
func SpaceOf(info Info) Space { return Space{Dim: info.Dim, EncoderID: EncoderID(info.Model)} }

func (s Space) valid() error {
	if s.Dim < 1 || s.Dim > MaxDim {
		return fmt.Errorf("%w: dim %d outside 1..%d", ErrInvalidSpace, s.Dim, MaxDim)
	}
	return nil
}

// SpacesOptions configures NewSpaces.
type SpacesOptions struct {
	// Pin persists a tenant's first Space before it takes effect; an error
	// leaves the tenant unpinned and is returned by Check. Default nil: pins
	// live in memory only.
	Pin func(ctx context.Context, tenant string, s Space) error
}

// Spaces pins each tenant's Space and declines vectors from any other. It is
// safe for concurrent use; pins of different tenants do not wait on each
// other.
type Spaces struct {
	pin func(ctx context.Context, tenant string, s Space) error

	mu      sync.Mutex
	tenants map[string]*tenantSpace

	width   atomic.Uint64
	encoder atomic.Uint64
}

type tenantSpace struct {
	mu     sync.Mutex // held across Pin so one first vector wins
	space  Space
	pinned bool
}

// NewSpaces returns a checker with no tenant pinned.
func NewSpaces(opts SpacesOptions) *Spaces {
	return &Spaces{pin: opts.Pin, tenants: make(map[string]*tenantSpace)}
}

func (s *Spaces) tenant(name string) *tenantSpace {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tenants[name]
	if !ok {
		t = &tenantSpace{}
		s.tenants[name] = t
	}
	return t
}

// Load sets a tenant's pinned Space without calling Pin: use it for Spaces
// read back from storage and to flip a tenant to a re-embedded generation.
func (s *Spaces) Load(tenant string, sp Space) error {
	if err := sp.valid(); err != nil {
		return err
	}
	t := s.tenant(tenant)
	t.mu.Lock()
	t.space, t.pinned = sp, true
	t.mu.Unlock()
	return nil
}

// Pinned returns the tenant's Space, if any.
func (s *Spaces) Pinned(tenant string) (Space, bool) {
	s.mu.Lock()
	t, ok := s.tenants[tenant]
	s.mu.Unlock()
	if !ok {
		return Space{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.space, t.pinned
}

// Check admits vectors of Space got for tenant and returns the tenant's
// pinned Space. The first admitted Space is pinned (through Pin, when set).
// After that, another width fails with ErrEmbeddingWidth and another encoder
// at the same width with ErrEmbeddingEncoder; each counts in Declined.
// Generation is not compared: got names an encoder, the pin its generation.
func (s *Spaces) Check(ctx context.Context, tenant string, got Space) (Space, error) {
	if err := got.valid(); err != nil {
		return Space{}, err
	}
	t := s.tenant(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.pinned {
		if s.pin != nil {
			if err := s.pin(ctx, tenant, got); err != nil {
				return Space{}, fmt.Errorf("embed: pin space for %q: %w", tenant, err)
			}
		}
		t.space, t.pinned = got, true
		return got, nil
	}
	switch {
	case got.Dim != t.space.Dim:
		s.width.Add(1)
		return t.space, fmt.Errorf("%w: tenant %q has %d dims, vector has %d", ErrEmbeddingWidth, tenant, t.space.Dim, got.Dim)
	case got.EncoderID != t.space.EncoderID:
		s.encoder.Add(1)
		return t.space, fmt.Errorf("%w: tenant %q has encoder %016x, vector has %016x", ErrEmbeddingEncoder, tenant, t.space.EncoderID, got.EncoderID)
	}
	return t.space, nil
}

// Declined returns the declined counts by reason; both reasons are always
// present so a metrics exporter reports zeros too.
func (s *Spaces) Declined() map[string]uint64 {
	return map[string]uint64{ReasonWidth: s.width.Load(), ReasonEncoder: s.encoder.Load()}
}
