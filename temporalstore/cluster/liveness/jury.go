package liveness

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// JuryOptions configure a Jury; the zero value takes every default.
type JuryOptions struct {
	// Ratio is the fraction of the other live members that must suspect a
	// member to convict it, in (0.5, 1]: over half, so that two sides of
	// a partition cannot each convict the other. Default 2/3 (both others
	// in a cluster of three, three of four others in one of five).
	Ratio float64
	// MaxConvictFraction bounds the members convicted in one evaluation:
	// more than max(1, ⌊MaxConvictFraction·members⌋) at once looks like a
	// network fault rather than failed nodes, and puts the jury in safe
	// mode. Default 1/3.
	MaxConvictFraction float64
	// Placement, if set, returns each shard's voting members (shard name
	// → member names): a conviction that would leave a shard with no live
	// voter is refused. Default: none (no shard is checked).
	Placement func() map[string][]string
}

func (o JuryOptions) withDefaults() JuryOptions {
	if o.Ratio == 0 {
		o.Ratio = 2.0 / 3
	}
	if o.MaxConvictFraction == 0 {
		o.MaxConvictFraction = 1.0 / 3
	}
	return o
}

// Validate reports whether the options, after defaults, are usable.
func (o JuryOptions) Validate() error {
	o = o.withDefaults()
	switch {
	case !(o.Ratio > 0.5 && o.Ratio <= 1):
		return fmt.Errorf("%w: Ratio %v: want more than 0.5 and at most 1", ErrInvalid, o.Ratio)
	case !(o.MaxConvictFraction > 0 && o.MaxConvictFraction <= 1):
		return fmt.Errorf("%w: MaxConvictFraction %v: want more than 0 and at most 1", ErrInvalid, o.MaxConvictFraction)
	}
	return nil
}

// Verdict is the outcome of an evaluation.
type Verdict struct {
	// Convicted is every member convicted now, sorted; Newly and
	// Acquitted what this evaluation changed.
	Convicted, Newly, Acquitted []string
	// Refused holds members that enough observers suspect but that were
	// not convicted, with the reason (a shard they would orphan).
	Refused map[string]string
	// SafeMode is set when this evaluation convicted no one new because
	// the suspicions looked like a fault of the network or of the
	// observers; SafeReason says which.
	SafeMode   bool
	SafeReason string
}

// Jury keeps the members' reports and the convictions.
type Jury struct {
	o         JuryOptions
	mu        sync.Mutex
	members   []string
	reports   map[string]map[string]bool // observer → suspects
	convicted map[string]bool
}

// NewJury returns a Jury over members (at least one, no duplicates, no
// empty names).
func NewJury(members []string, o JuryOptions) (*Jury, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ms := slices.Clone(members)
	slices.Sort(ms)
	for i, m := range ms {
		if m == "" || (i > 0 && ms[i-1] == m) {
			return nil, fmt.Errorf("%w: member %q empty or repeated", ErrInvalid, m)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%w: no members", ErrInvalid)
	}
	return &Jury{o: o.withDefaults(), members: ms, reports: map[string]map[string]bool{}, convicted: map[string]bool{}}, nil
}

func (j *Jury) isMember(m string) bool {
	_, ok := slices.BinarySearch(j.members, m)
	return ok
}

// Report replaces observer's view: the members it suspects now. A
// member's suspicion of itself is dropped; its report counts only while
// it is not convicted.
func (j *Jury) Report(observer string, suspects []string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.isMember(observer) {
		return fmt.Errorf("%w: observer %q", ErrUnknownMember, observer)
	}
	view := make(map[string]bool, len(suspects))
	for _, s := range suspects {
		if !j.isMember(s) {
			return fmt.Errorf("%w: suspect %q", ErrUnknownMember, s)
		}
		if s != observer {
			view[s] = true
		}
	}
	j.reports[observer] = view
	return nil
}

// Evaluate applies the reports: acquittals first, then convictions, within
// the guardrails (see the package documentation).
func (j *Jury) Evaluate() Verdict {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := Verdict{Refused: map[string]string{}}
	var candidates []string
	for _, m := range j.members {
		observers, suspecting := 0, 0
		for _, o := range j.members {
			if o == m || j.convicted[o] {
				continue
			}
			observers++
			if j.reports[o][m] {
				suspecting++
			}
		}
		guilty := observers > 0 && suspecting >= int(math.Ceil(j.o.Ratio*float64(observers)-1e-9))
		switch {
		case j.convicted[m] && !guilty && observers > 0:
			delete(j.convicted, m)
			v.Acquitted = append(v.Acquitted, m)
		case !j.convicted[m] && guilty:
			candidates = append(candidates, m)
		}
	}
	live := len(j.members) - len(j.convicted)
	atOnce := max(1, int(j.o.MaxConvictFraction*float64(len(j.members))))
	majority := len(j.members)/2 + 1
	switch {
	case len(candidates) > atOnce:
		v.SafeMode = true
		v.SafeReason = fmt.Sprintf("%d members suspected at once (at most %d): a network fault is likelier than failed nodes", len(candidates), atOnce)
	case len(candidates) > 0 && live-len(candidates) < majority:
		v.SafeMode = true
		v.SafeReason = fmt.Sprintf("convicting %d would leave %d of %d members live, under a majority", len(candidates), live-len(candidates), len(j.members))
	default:
		var placement map[string][]string
		if j.o.Placement != nil {
			placement = j.o.Placement()
		}
		for _, c := range candidates {
			// Only an orphan refuses: a shard below quorum is so whether
			// or not its dead voter is convicted.
			if err := CheckRemoval(placement, j.convicted, c); errors.Is(err, ErrWouldOrphan) {
				v.Refused[c] = err.Error()
				continue
			}
			j.convicted[c] = true
			v.Newly = append(v.Newly, c)
		}
	}
	for _, m := range j.members {
		if j.convicted[m] {
			v.Convicted = append(v.Convicted, m)
		}
	}
	return v
}

// Convicted reports whether m is convicted now.
func (j *Jury) Convicted(m string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.convicted[m]
}
