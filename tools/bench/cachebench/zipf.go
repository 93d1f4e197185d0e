package cachebench

import (
	"fmt"
	"math/rand/v2"
)

// ZipfParams describes a synthetic trace drawn from math/rand/v2's Zipf
// distribution: key k in [0, IMax] has probability proportional to
// (V + k)^(-S).
type ZipfParams struct {
	// S is the exponent; math/rand/v2 needs S > 1.
	S float64 `json:"s"`
	// V shifts the ranks; it must be at least 1.
	V float64 `json:"v"`
	// IMax is the largest key.
	IMax uint64 `json:"imax"`
	// Requests is the length of the trace.
	Requests int `json:"requests"`
	// Seed seeds the PCG source, so the same parameters give the same
	// trace.
	Seed uint64 `json:"seed"`
}

// DefaultZipf is the Zipf workload of the published Go cache comparisons
// (otter's simulator): s=1.0001, v=10, keys up to 5·10^7, one million
// requests.
var DefaultZipf = ZipfParams{S: 1.0001, V: 10, IMax: 50_000_000, Requests: 1_000_000, Seed: 1}

func (p ZipfParams) validate() error {
	if p.S <= 1 || p.V < 1 || p.Requests < 1 {
		return fmt.Errorf("zipf: need s > 1, v >= 1 and requests >= 1, got s=%g v=%g requests=%d", p.S, p.V, p.Requests)
	}
	return nil
}

// GenerateZipf returns the trace described by p; equal parameters give
// equal traces.
func GenerateZipf(p ZipfParams) (*Trace, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))
	z := rand.NewZipf(r, p.S, p.V, p.IMax)
	keys := make([]uint64, p.Requests)
	for i := range keys {
		keys[i] = z.Uint64()
	}
	return &Trace{Name: "zipf", Keys: keys}, nil
}
