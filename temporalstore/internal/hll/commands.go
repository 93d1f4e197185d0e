package hll

// The commands' effects on a key's string value, as Redis's PFADD,
// PFCOUNT and PFMERGE change it. A value v that is nil with exists false
// is a missing key. Each returns the new value to store, or nil when the
// key keeps its value; an error changes nothing.

// PFAdd adds elems to the value (a missing key becomes an empty sketch,
// which counts as a change); changed is PFADD's reply. The cache is marked
// stale when anything changed.
func PFAdd(v []byte, exists bool, elems [][]byte) (out []byte, changed bool, err error) {
	s := New()
	if exists {
		if s, err = Parse(v); err != nil {
			return nil, false, err
		}
	} else {
		changed = true
	}
	for _, e := range elems {
		c, err := s.Add(e)
		if err != nil {
			return nil, false, err
		}
		changed = changed || c
	}
	if !changed {
		return nil, false, nil
	}
	s.Invalidate()
	return s.Bytes(), true, nil
}

// PFCount is PFCOUNT of one key: the cached cardinality when it is valid
// (out nil), else the computed one, with the value that caches it.
func PFCount(v []byte, exists bool) (card uint64, out []byte, err error) {
	if !exists {
		return 0, nil, nil
	}
	if err := Check(v); err != nil {
		return 0, nil, err
	}
	s := &Sketch{b: v}
	if card, ok := s.Cached(); ok {
		return card, nil, nil
	}
	if card, err = s.Count(); err != nil {
		return 0, nil, err
	}
	s, _ = Parse(v)
	s.SetCached(card)
	return card, s.Bytes(), nil
}

// Union merges the values, in order (nil: a missing key), into one set of
// registers, as PFCOUNT of several keys and PFMERGE do; dense reports that
// one of them was dense. The first value that fails stops it.
func Union(vals [][]byte) (regs *RegisterSet, dense bool, err error) {
	regs = new(RegisterSet)
	for _, v := range vals {
		d, err := regs.Union(v)
		if err != nil {
			return nil, false, err
		}
		dense = dense || d
	}
	return regs, dense, nil
}

// Union raises the registers to value v's (nil: a missing key, which
// changes nothing); dense reports that v is dense.
func (m *RegisterSet) Union(v []byte) (dense bool, err error) {
	if v == nil {
		return false, nil
	}
	if err := Check(v); err != nil {
		return false, err
	}
	s := &Sketch{b: v}
	return s.Encoding() == Dense, s.Merge(m)
}

// PFMerge writes registers regs (Union's, which covered the destination
// value v) into v, as PFMERGE does: a missing key starts empty, the value
// turns dense when dense, each non-zero register is raised in order (a
// sparse value may turn dense on the way), and the cache is marked stale
// even when nothing changed.
func PFMerge(v []byte, exists bool, regs *RegisterSet, dense bool) ([]byte, error) {
	s := New()
	if exists {
		var err error
		if s, err = Parse(v); err != nil {
			return nil, err
		}
	}
	if dense {
		if err := s.ToDense(); err != nil {
			return nil, err
		}
	}
	for i, c := range regs {
		if c != 0 {
			// Redis ignores a failure here: Union has read v whole.
			_, _ = s.Set(i, c)
		}
	}
	s.Invalidate()
	return s.Bytes(), nil
}
