package policy

// Slots let a caller that keeps its own table of resident keys skip the
// policy's key index on the hottest path, a hit: Slot returns where a
// resident key's node lives, and AccessSlot records a hit there after
// checking that the node still holds the key (nodes are reused, so a slot
// outlives its key; a stale slot falls back to the index).

// NoSlot is the slot of a key that is not resident.
const NoSlot int32 = none

// holds reports whether slot i is a live node of key.
func (t *table) holds(i int32, key uint64) bool {
	return i >= t.nlists && int(i) < len(t.nodes) && t.nodes[i].key == key && t.nodes[i].prev != none
}

// Slot returns the slot of resident key, or NoSlot.
func (p *TinyLFU) Slot(key uint64) int32 { return p.t.lookup(key) }

// AccessSlot is Access(key) given the slot Slot returned for it.
func (p *TinyLFU) AccessSlot(key uint64, slot int32) bool {
	if !p.t.holds(slot, key) {
		return p.Access(key)
	}
	p.sketch.increment(key)
	p.hitsInSample++
	p.touch(slot)
	return true
}

// Slot returns the slot of resident key within its segment, or NoSlot.
func (p *SLRU) Slot(key uint64) int32 { return p.seg(key).t.lookup(key) }

// AccessSlot is Access(key) given the slot Slot returned for it.
func (p *SLRU) AccessSlot(key uint64, slot int32) bool {
	s := p.seg(key)
	if !s.t.holds(slot, key) {
		return s.Access(key)
	}
	s.hit(slot)
	return true
}

// admitSlot is AdmitSlot for a policy whose Admit has no use for a slot:
// it admits, then looks the slot up.
func admitSlot(p Policy, key uint64, cost int64, victims []uint64) ([]uint64, int32, error) {
	victims, err := p.Admit(key, cost, victims)
	return victims, p.Slot(key), err
}

// AdmitSlot is Admit, returning key's slot after it; see [Policy].
func (p *SLRU) AdmitSlot(key uint64, _ int32, cost int64, victims []uint64) ([]uint64, int32, error) {
	return admitSlot(p, key, cost, victims)
}

// AdmitSlot is Admit, returning key's slot after it; see [Policy].
func (p *FIFO) AdmitSlot(key uint64, _ int32, cost int64, victims []uint64) ([]uint64, int32, error) {
	return admitSlot(p, key, cost, victims)
}

// AdmitSlot is Admit, returning key's slot after it; see [Policy].
func (p *ARC) AdmitSlot(key uint64, _ int32, cost int64, victims []uint64) ([]uint64, int32, error) {
	return admitSlot(p, key, cost, victims)
}
