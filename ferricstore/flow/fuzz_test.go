package flow

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeRecord: any bytes decode or fail cleanly, and what decodes
// encodes back to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	for _, c := range []Command{
		&Create{ID: "a", Type: "t", Payload: []byte("p"), Attributes: []Attr{{"k", "v"}}, HasRunAt: true, RunAtMs: 5},
		&Claim{Type: "t", State: Queued, Worker: "w", LeaseMs: 10, Limit: 3, ReclaimExpired: true},
		&Batch{Commands: []Command{&Complete{ID: "a", LeaseToken: "w:1:1", Fencing: 1}, &Cancel{ID: "b"}}, Independent: true},
		&Retry{ID: "a", Override: Policy{Set: SetMaxRetries, MaxRetries: 2}},
		&SetSchedule{Schedule: Schedule{Name: "s", Type: "t", EveryMs: 10}},
		&SetPolicy{Type: "t", Policy: Policy{Set: SetMode, Mode: FIFO}},
		&Tick{PurgeBeforeMs: 3},
	} {
		f.Add(AppendRecord(nil, 7, c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		now, c, err := DecodeRecord(b)
		if err != nil {
			return
		}
		// Applying a decoded command never panics.
		tb := NewTable()
		_, _ = tb.Apply(now, &Create{ID: "a", Type: "t"})
		_, _ = tb.Apply(now, c)
		again := AppendRecord(nil, now, c)
		now2, c2, err := DecodeRecord(again)
		require.NoError(t, err)
		require.Equal(t, now, now2)
		require.Equal(t, again, AppendRecord(nil, now2, c2))
	})
}

// FuzzLoadSnapshot: any bytes load or fail cleanly, and a loaded table
// snapshots back to the same bytes.
func FuzzLoadSnapshot(f *testing.F) {
	tb := NewTable()
	_, _ = tb.Apply(1, &Create{ID: "a", Type: "t", MaxActiveMs: 50})
	_, _ = tb.Apply(1, &Create{ID: "b", Type: "t", Partition: "p"})
	_, _ = tb.Apply(2, &Claim{Type: "t", State: Queued, Worker: "w", LeaseMs: 10, Limit: 1})
	_, _ = tb.Apply(2, &SetPolicy{Type: "t", Policy: Policy{Set: SetMaxRetries, MaxRetries: 1}})
	_, _ = tb.Apply(2, &SetSchedule{Schedule: Schedule{Name: "s", Type: "t", EveryMs: 10}})
	f.Add(tb.Snapshot())
	f.Add(NewTable().Snapshot())
	f.Fuzz(func(t *testing.T, b []byte) {
		loaded, err := LoadSnapshot(b)
		if err != nil {
			return
		}
		snap := loaded.Snapshot()
		again, err := LoadSnapshot(snap)
		require.NoError(t, err)
		require.Equal(t, snap, again.Snapshot())
		_, _ = loaded.Apply(100, &Claim{Type: "t", State: Queued, Worker: "w", LeaseMs: 10, Limit: 5, ReclaimExpired: true})
		_, _ = loaded.Apply(100, &Tick{PurgeBeforeMs: 50})
	})
}
