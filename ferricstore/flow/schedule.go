package flow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Overlap is what a schedule does when an occurrence comes while the
// flow of its previous one is not terminal yet.
type Overlap uint8

// Overlap policies.
const (
	// OverlapAllow makes the next flow anyway (the default).
	OverlapAllow Overlap = 1 + iota
	// OverlapSkip counts the occurrence as skipped and makes nothing.
	OverlapSkip
	// OverlapQueue waits until the previous flow is terminal, then makes
	// the next one.
	OverlapQueue
	// OverlapFail stops the schedule (Schedule.Failed).
	OverlapFail
)

// ParseOverlap reads "allow", "skip", "queue_after_previous" or
// "fail_schedule", in any case.
func ParseOverlap(s string) (Overlap, bool) {
	switch strings.ToLower(s) {
	case "allow":
		return OverlapAllow, true
	case "skip":
		return OverlapSkip, true
	case "queue_after_previous":
		return OverlapQueue, true
	case "fail_schedule":
		return OverlapFail, true
	}
	return 0, false
}

func (o Overlap) String() string {
	switch o {
	case OverlapSkip:
		return "skip"
	case OverlapQueue:
		return "queue_after_previous"
	case OverlapFail:
		return "fail_schedule"
	}
	return "allow"
}

// Schedule makes flows at intervals: its target flows are named
// "<name>:<due_at_ms>:<fire_count>".
type Schedule struct {
	Name string
	// The flows it makes.
	Type, State, Partition string
	Payload                []byte
	Priority               int64
	// EveryMs is the interval; 0 fires once.
	EveryMs   int64
	NextDueMs int64
	Overlap   Overlap
	// Fired counts the flows made, Coalesced the occurrences folded into
	// a late one, Skipped those OverlapSkip passed over.
	Fired, Coalesced, Skipped uint64
	// LastTarget is the flow made last.
	LastTarget string
	// Failed is set when OverlapFail stopped it, Done when a one-shot
	// schedule fired.
	Failed, Done bool
}

// Schedule returns a copy of schedule name.
func (t *Table) Schedule(name string) (Schedule, bool) {
	s, ok := t.schedules[name]
	if !ok {
		return Schedule{}, false
	}
	c := *s
	c.Payload = slices.Clone(s.Payload)
	return c, true
}

// Schedules returns the schedules' names in order.
func (t *Table) Schedules() []string { return sortedKeys(t.schedules) }

// SetSchedule makes a schedule, or with Replace replaces one.
type SetSchedule struct {
	Schedule Schedule
	// StartMs is the first occurrence (now when not HasStart).
	StartMs  int64
	HasStart bool
	Replace  bool
}

func (*SetSchedule) kind() byte { return kSetSchedule }

func (t *Table) setSchedule(now int64, c *SetSchedule, u *undo) (Result, error) {
	s := c.Schedule
	switch {
	case s.Name == "" || s.Type == "":
		return Result{}, fmt.Errorf("%w: a schedule needs a name and a type", ErrInvalid)
	case s.EveryMs < 0:
		return Result{}, fmt.Errorf("%w: EVERY must not be negative", ErrInvalid)
	case s.State == Running:
		return Result{}, ErrRunningState
	case Terminal(s.State):
		return Result{}, ErrWrongState
	}
	old, had := t.schedules[s.Name]
	if had && !c.Replace {
		return Result{}, ErrScheduleExists
	}
	if s.State == "" {
		s.State = Queued
	}
	if s.Overlap == 0 {
		s.Overlap = OverlapAllow
	}
	s.Payload = slices.Clone(s.Payload)
	s.NextDueMs = now
	if c.HasStart {
		s.NextDueMs = c.StartMs
	}
	s.Fired, s.Coalesced, s.Skipped, s.LastTarget, s.Failed, s.Done = 0, 0, 0, "", false, false
	if had {
		// A replaced schedule keeps its counts and its last flow, so its
		// targets' names stay unique and its overlap rule still sees it.
		s.Fired, s.Coalesced, s.Skipped, s.LastTarget = old.Fired, old.Coalesced, old.Skipped, old.LastTarget
	}
	u.onUndo(func(t *Table) {
		if had {
			t.schedules[s.Name] = old
		} else {
			delete(t.schedules, s.Name)
		}
	})
	t.schedules[s.Name] = &s
	return Result{Changed: true, Schedule: s}, nil
}

// DeleteSchedule deletes a schedule; the flows it made stay.
type DeleteSchedule struct{ Name string }

func (*DeleteSchedule) kind() byte { return kDeleteSchedule }

func (t *Table) deleteSchedule(c *DeleteSchedule, u *undo) (Result, error) {
	old, ok := t.schedules[c.Name]
	if !ok {
		return Result{}, ErrScheduleNotFound
	}
	u.onUndo(func(t *Table) { t.schedules[c.Name] = old })
	delete(t.schedules, c.Name)
	return Result{Changed: true}, nil
}

// Tick does what time calls for at now: flows alive past their
// MaxActiveMs fail, schedules whose occurrence came make their flows,
// and terminal flows that ended before PurgeBeforeMs (when positive), or
// the oldest beyond MaxDone, are deleted. The caller picks PurgeBeforeMs (now less a retention), so a
// logged Tick replays the same.
type Tick struct {
	PurgeBeforeMs int64
	// MaxDone, when positive, also deletes the oldest terminal flows
	// beyond that many.
	MaxDone int
}

func (*Tick) kind() byte { return kTick }

func (t *Table) tick(now int64, c *Tick, u *undo) (Result, error) {
	var res Result
	var expired []*Record
	t.active.Ascend(func(it item) bool {
		if it.at > now {
			return false
		}
		expired = append(expired, it.r)
		return true
	})
	for _, r := range expired {
		u.save(t, r.ID, r)
		t.unindex(r)
		from := r.State
		r.State = Failed
		r.Error = []byte("max_active_ms")
		r.LeaseDeadlineMs, r.NextRunAtMs = 0, 0
		r.event(now, EventExpired, from, Failed, "", "max_active_ms")
		t.index(r)
		res.Expired++
	}
	for _, name := range sortedKeys(t.schedules) {
		if err := t.fire(now, t.schedules[name], &res, u); err != nil {
			return Result{}, err
		}
	}
	if c.PurgeBeforeMs > 0 {
		var old []*Record
		t.done.Ascend(func(it item) bool {
			if it.at >= c.PurgeBeforeMs {
				return false
			}
			old = append(old, it.r)
			return true
		})
		for _, r := range old {
			t.purge(r, u)
			res.Purged++
		}
	}
	for c.MaxDone > 0 && t.done.Len() > c.MaxDone {
		oldest, _ := t.done.Min()
		t.purge(oldest.r, u)
		res.Purged++
	}
	res.Changed = res.Expired+res.Fired+res.Skipped+res.Purged > 0 || res.Coalesced > 0
	return res, nil
}

// purge deletes terminal flow r.
func (t *Table) purge(r *Record, u *undo) {
	u.save(t, r.ID, r)
	t.unindex(r)
	delete(t.flows, r.ID)
}

// fire makes schedule s's flow if an occurrence came.
func (t *Table) fire(now int64, s *Schedule, res *Result, u *undo) error {
	if s.Failed || s.Done || s.NextDueMs > now {
		return nil
	}
	busy := false
	if prev, ok := t.flows[s.LastTarget]; ok && !Terminal(prev.State) {
		busy = true
	}
	old := *s
	restore := func(t *Table) { *s = old }
	switch {
	case busy && s.Overlap == OverlapQueue:
		return nil
	case busy && s.Overlap == OverlapFail:
		u.onUndo(restore)
		s.Failed = true
		res.Skipped++
		return nil
	}
	u.onUndo(restore)
	due := s.NextDueMs
	// Occurrences passed: this one and every whole interval since.
	var missed uint64
	if s.EveryMs > 0 {
		missed = uint64((now - due) / s.EveryMs)
	}
	if s.EveryMs == 0 {
		s.Done = true
	} else if missed > 0 {
		s.NextDueMs = addCap(now, s.EveryMs)
	} else {
		s.NextDueMs = addCap(due, s.EveryMs)
	}
	if busy && s.Overlap == OverlapSkip {
		s.Skipped += 1 + missed
		res.Skipped += 1 + int(missed)
		return nil
	}
	s.Coalesced += missed
	res.Coalesced += int(missed)
	s.Fired++
	id := s.Name + ":" + strconv.FormatInt(due, 10) + ":" + strconv.FormatUint(s.Fired, 10)
	s.LastTarget = id
	if _, exists := t.flows[id]; exists {
		return nil
	}
	if _, err := t.create(now, &Create{ID: id, Type: s.Type, State: s.State, Partition: s.Partition, Payload: s.Payload, Priority: s.Priority}, u); err != nil {
		return err
	}
	res.Fired++
	return nil
}
