package stream

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in      string
		missing uint64
		want    ID
		ok      bool
	}{
		{"-", 0, ID{}, true},
		{"+", 0, MaxID, true},
		{"5", 0, ID{5, 0}, true},
		{"5", math.MaxUint64, ID{5, math.MaxUint64}, true},
		{"5-3", 0, ID{5, 3}, true},
		{"18446744073709551615-18446744073709551615", 0, MaxID, true},
		{"18446744073709551616-0", 0, ID{}, false},
		{"+5-1", 0, ID{5, 1}, true},  // strtoull takes a sign
		{" 5-1", 0, ID{5, 1}, true},  // and leading white space
		{"05-01", 0, ID{5, 1}, true}, // and leading zeros
		{"-5-1", 0, ID{}, false},     // a strict negative is refused
		{"5-", 0, ID{}, false},
		{"", 0, ID{}, false},
		{"5-*", 0, ID{}, false},
		{"a-1", 0, ID{}, false},
		{"1-2-3", 0, ID{}, false},
		{"1.5", 0, ID{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseID(tc.in, tc.missing)
			if !tc.ok {
				require.ErrorIs(t, err, ErrInvalidID)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := ParseStrictID("-")
	require.ErrorIs(t, err, ErrInvalidID)
	id, auto, err := ParseAddID("7-*")
	require.NoError(t, err)
	require.True(t, auto)
	require.Equal(t, ID{7, 0}, id)
	_, _, err = ParseAddID("+")
	require.ErrorIs(t, err, ErrInvalidID)
}

func fields(kv ...string) [][]byte {
	out := make([][]byte, len(kv))
	for i, s := range kv {
		out[i] = []byte(s)
	}
	return out
}

// filled is a stream of n entries 1-1 .. 1-n.
func filled(t *testing.T, n int) *Stream {
	s := New()
	for i := 1; i <= n; i++ {
		require.NoError(t, s.Add(ID{1, uint64(i)}, fields("i", fmt.Sprint(i))))
	}
	return s
}

func ids(es []Entry) []ID {
	out := make([]ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func TestNextID(t *testing.T) {
	s := New()
	id, err := s.NextID(1000, true, ID{}, false)
	require.NoError(t, err)
	require.Equal(t, ID{1000, 0}, id)
	require.NoError(t, s.Add(id, fields("f", "v")))
	// A clock gone back never lowers IDs.
	id, err = s.NextID(10, true, ID{}, false)
	require.NoError(t, err)
	require.Equal(t, ID{1000, 1}, id)
	// ms-*: the next sequence within ms, or 0 in a later ms.
	id, err = s.NextID(0, false, ID{1000, 0}, true)
	require.NoError(t, err)
	require.Equal(t, ID{1000, 1}, id)
	id, err = s.NextID(0, false, ID{2000, 0}, true)
	require.NoError(t, err)
	require.Equal(t, ID{2000, 0}, id)
	_, err = s.NextID(0, false, ID{999, 0}, true)
	require.ErrorIs(t, err, ErrIDTooSmall)
	_, err = s.NextID(0, false, ID{1000, 0}, false)
	require.ErrorIs(t, err, ErrIDTooSmall)
	// The top ID: nothing after it.
	require.NoError(t, s.Add(MaxID, nil))
	_, err = s.NextID(0, true, ID{}, false)
	require.ErrorIs(t, err, ErrExhausted)
	// A sequence at its maximum rolls into the next millisecond.
	s = New()
	require.NoError(t, s.Add(ID{5, math.MaxUint64}, nil))
	id, err = s.NextID(5, true, ID{}, false)
	require.NoError(t, err)
	require.Equal(t, ID{6, 0}, id)
	_, err = s.NextID(0, false, ID{5, 0}, true)
	require.ErrorIs(t, err, ErrIDTooSmall)
}

func TestRangeAndDelete(t *testing.T) {
	s := filled(t, 10)
	require.Equal(t, 10, s.Len())
	require.Equal(t, []ID{{1, 3}, {1, 4}, {1, 5}}, ids(s.Range(ID{1, 3}, ID{1, 5}, 0, false)))
	require.Equal(t, []ID{{1, 5}, {1, 4}}, ids(s.Range(ID{1, 3}, ID{1, 5}, 2, true)))
	require.Equal(t, []ID{{1, 10}}, ids(s.Range(ID{1, 10}, MaxID, 0, true)))
	require.Empty(t, s.Range(ID{1, 5}, ID{1, 3}, 0, false))
	require.Equal(t, 2, s.Delete([]ID{{1, 4}, {1, 1}, {1, 4}, {9, 9}}))
	require.Equal(t, 8, s.Len())
	require.Equal(t, ID{1, 4}, s.MaxDeletedID)
	require.Equal(t, []ID{{1, 2}, {1, 3}, {1, 5}}, ids(s.Range(ID{}, ID{1, 5}, 0, false)))
	require.Equal(t, []ID{{1, 5}, {1, 3}}, ids(s.Range(ID{}, ID{1, 5}, 2, true)))
	require.Equal(t, []ID{{1, 5}}, ids(s.After(ID{1, 3}, 1)))
	first, _ := s.First()
	require.Equal(t, ID{1, 2}, first.ID)
	// Deleting most entries compacts the array and keeps everything else.
	var all []ID
	for i := 1; i <= 200; i++ {
		require.NoError(t, s.Add(ID{2, uint64(i)}, nil))
		all = append(all, ID{2, uint64(i)})
	}
	require.Equal(t, 190, s.Delete(all[:190]))
	require.Equal(t, 18, s.Len())
	// Each walks what Range returns, as many as Len says.
	var each []Entry
	s.Each(func(e Entry) { each = append(each, e) })
	require.Equal(t, s.Range(ID{}, MaxID, 0, false), each)
	require.Len(t, each, s.Len())
	last, _ := s.Last()
	require.Equal(t, ID{2, 200}, last.ID)
	require.Equal(t, uint64(210), s.EntriesAdded)
	require.Len(t, s.Range(ID{}, MaxID, 0, false), 18)
}

func TestTrim(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n           int
		trim        Trim
		removed     int64
		len         int
		firstRemain ID
	}{
		{"exact maxlen", 250, Trim{Strategy: TrimMaxLen, MaxLen: 7}, 243, 7, ID{1, 244}},
		{"exact maxlen above length", 5, Trim{Strategy: TrimMaxLen, MaxLen: 7}, 0, 5, ID{1, 1}},
		{"exact minid", 250, Trim{Strategy: TrimMinID, MinID: ID{1, 120}}, 119, 131, ID{1, 120}},
		{"approx maxlen keeps whole nodes", 250, Trim{Strategy: TrimMaxLen, MaxLen: 120, Approx: true}, 100, 150, ID{1, 101}},
		{"approx maxlen 0 empties", 250, Trim{Strategy: TrimMaxLen, MaxLen: 0, Approx: true}, 250, 0, ID{}},
		{"approx limit", 350, Trim{Strategy: TrimMaxLen, MaxLen: 0, Approx: true, Limit: 250}, 200, 150, ID{1, 201}},
		{"approx minid", 250, Trim{Strategy: TrimMinID, MinID: ID{1, 220}, Approx: true}, 200, 50, ID{1, 201}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := filled(t, tc.n)
			require.Equal(t, tc.removed, s.Trim(tc.trim))
			require.Equal(t, tc.len, s.Len())
			first, ok := s.First()
			require.Equal(t, tc.len > 0, ok)
			require.Equal(t, tc.firstRemain, first.ID)
			require.Equal(t, ID{1, uint64(tc.n)}, s.LastID, "trimming keeps the last ID")
			require.True(t, s.MaxDeletedID.IsZero(), "trimming is not deleting")
		})
	}
}

func TestSetID(t *testing.T) {
	s := filled(t, 3)
	require.ErrorIs(t, s.SetID(ID{1, 2}, -1, ID{}), ErrSetIDTooSmall)
	require.ErrorIs(t, s.SetID(ID{1, 9}, 2, ID{}), ErrSetIDAdded)
	require.NoError(t, s.SetID(ID{1, 9}, 10, ID{1, 5}))
	require.Equal(t, ID{1, 9}, s.LastID)
	require.Equal(t, uint64(10), s.EntriesAdded)
	require.Equal(t, ID{1, 5}, s.MaxDeletedID)
	require.NoError(t, s.SetID(ID{1, 4}, -1, ID{}), "the last ID may go below MaxDeletedID, as redis-server 7.0 lets it")
	_, err := s.NextID(0, false, ID{1, 3}, false)
	require.ErrorIs(t, err, ErrIDTooSmall)
}

// The lag cases Redis 7 shows: a group at 0 over 4 entries knows its lag
// (4) but not its entries-read; an unread entry deleted makes the lag
// unknown; read to the end, both are known again.
func TestLag(t *testing.T) {
	s := filled(t, 4)
	g, err := s.CreateGroup("g", ID{}, UnknownEntriesRead)
	require.NoError(t, err)
	lag, ok := s.Lag(g)
	require.True(t, ok)
	require.Equal(t, int64(4), lag)
	require.Equal(t, int64(UnknownEntriesRead), g.EntriesRead)
	s.Delete([]ID{{1, 3}})
	_, ok = s.Lag(g)
	require.False(t, ok)
	s.ReadNew(g, "c", 0, false, 10)
	require.Equal(t, int64(4), g.EntriesRead)
	lag, ok = s.Lag(g)
	require.True(t, ok)
	require.Equal(t, int64(0), lag)
	_, err = s.CreateGroup("g", ID{}, 0)
	require.ErrorIs(t, err, ErrGroupExists)
	empty := New()
	g2, _ := empty.CreateGroup("g", ID{}, UnknownEntriesRead)
	lag, ok = empty.Lag(g2)
	require.True(t, ok)
	require.Zero(t, lag)
}

func TestGroupDeliveryAckAndHistory(t *testing.T) {
	s := filled(t, 5)
	g, _ := s.CreateGroup("g", ID{}, UnknownEntriesRead)
	require.Equal(t, []ID{{1, 1}, {1, 2}}, ids(s.ReadNew(g, "alice", 2, false, 100)))
	require.Equal(t, []ID{{1, 3}, {1, 4}, {1, 5}}, ids(s.ReadNew(g, "bob", 0, false, 200)))
	require.Empty(t, s.ReadNew(g, "carol", 0, false, 300))
	require.NotNil(t, g.Consumer("carol"), "a consumer exists once named")
	require.Equal(t, -1, int(g.Consumer("carol").ActiveTime))
	require.Equal(t, ID{1, 5}, g.LastID)
	require.Equal(t, int64(5), g.EntriesRead)
	require.Equal(t, 5, g.PendingCount())
	require.Equal(t, 2, g.Ack([]ID{{1, 1}, {1, 4}, {7, 7}}))
	require.Equal(t, 3, g.PendingCount())
	// History: bob's own pending entries, redelivered; a deleted one comes
	// back without fields and keeps its count.
	s.Delete([]ID{{1, 5}})
	h := s.ReadHistory(g, "bob", ID{}, 0, 250)
	require.Equal(t, []ID{{1, 3}, {1, 5}}, ids(h))
	require.NotNil(t, h[0].Fields)
	require.Nil(t, h[1].Fields)
	require.Equal(t, uint64(2), g.PendingEntry(ID{1, 3}).DeliveryCount)
	require.Equal(t, int64(250), g.PendingEntry(ID{1, 3}).DeliveryTime)
	require.Equal(t, uint64(1), g.PendingEntry(ID{1, 5}).DeliveryCount)
	require.Equal(t, []ID{{1, 5}}, ids(s.ReadHistory(g, "bob", ID{1, 3}, 0, 260)))
	// SETID back: an entry pending with alice moves to carol, count 1.
	g.SetGroupID(ID{}, UnknownEntriesRead)
	require.Equal(t, []ID{{1, 1}}, ids(s.ReadNew(g, "carol", 1, false, 400)))
	s.ReadNew(g, "carol", 1, false, 400)
	p := g.PendingEntry(ID{1, 2})
	require.Equal(t, "carol", p.Consumer.Name)
	require.Equal(t, uint64(1), p.DeliveryCount)
	require.Equal(t, 0, g.Consumer("alice").Pending())
	// NOACK: delivered, not pending.
	s2 := filled(t, 2)
	g2, _ := s2.CreateGroup("g", ID{}, 0)
	require.Len(t, s2.ReadNew(g2, "c", 0, true, 1), 2)
	require.Zero(t, g2.PendingCount())
	// DELCONSUMER returns what it held and drops it from the group's PEL.
	require.Equal(t, 2, g.DeleteConsumer("carol"))
	require.Equal(t, 0, g.DeleteConsumer("nobody"))
}

func TestClaim(t *testing.T) {
	s := filled(t, 3)
	g, _ := s.CreateGroup("g", ID{}, 0)
	s.ReadNew(g, "alice", 1, false, 1000)
	// Not idle enough: nothing.
	require.Empty(t, s.Claim(g, "bob", []ID{{1, 1}}, Claim{MinIdle: 500, DeliveryTime: 1200, RetryCount: -1}, 1200))
	require.NotNil(t, g.Consumer("bob"))
	got := s.Claim(g, "bob", []ID{{1, 1}, {1, 2}}, Claim{MinIdle: 500, DeliveryTime: 1600, RetryCount: -1}, 1600)
	require.Equal(t, []ID{{1, 1}}, ids(got), "1-2 is not pending and no FORCE")
	require.Equal(t, uint64(2), g.PendingEntry(ID{1, 1}).DeliveryCount)
	require.Equal(t, "bob", g.PendingEntry(ID{1, 1}).Consumer.Name)
	// FORCE: the count is 2 (created at 1, claimed), or 1 with JUSTID, as
	// redis-server 7 does.
	s.Claim(g, "alice", []ID{{1, 2}}, Claim{Force: true, DeliveryTime: 1700, RetryCount: -1}, 1700)
	require.Equal(t, uint64(2), g.PendingEntry(ID{1, 2}).DeliveryCount)
	s.Claim(g, "alice", []ID{{1, 3}}, Claim{Force: true, JustID: true, DeliveryTime: 1700, RetryCount: -1}, 1700)
	require.Equal(t, uint64(1), g.PendingEntry(ID{1, 3}).DeliveryCount)
	// RETRYCOUNT sets it; LASTID raises the group's.
	s.Claim(g, "bob", []ID{{1, 3}}, Claim{DeliveryTime: 1800, RetryCount: 9, LastID: ID{1, 3}}, 1800)
	require.Equal(t, uint64(9), g.PendingEntry(ID{1, 3}).DeliveryCount)
	require.Equal(t, ID{1, 3}, g.LastID)
	// A pending ID whose entry is gone leaves the PEL.
	s.Delete([]ID{{1, 2}})
	require.Empty(t, s.Claim(g, "bob", []ID{{1, 2}}, Claim{RetryCount: -1}, 1900))
	require.Nil(t, g.PendingEntry(ID{1, 2}))
}

// XAUTOCLAIM's cursor is the next PEL entry it did not examine, and a
// deleted entry counts against COUNT, as redis-server 7 does.
func TestAutoClaim(t *testing.T) {
	s := filled(t, 5)
	g, _ := s.CreateGroup("g", ID{}, 0)
	s.ReadNew(g, "alice", 0, false, 1000)
	s.Delete([]ID{{1, 2}})
	claimed, deleted, next := s.AutoClaim(g, "bob", ID{}, 0, 2, false, 2000)
	require.Equal(t, []ID{{1, 1}}, ids(claimed))
	require.Equal(t, []ID{{1, 2}}, deleted)
	require.Equal(t, ID{1, 3}, next)
	claimed, deleted, next = s.AutoClaim(g, "bob", ID{1, 4}, 0, 2, true, 2000)
	require.Equal(t, []ID{{1, 4}, {1, 5}}, ids(claimed))
	require.Empty(t, deleted)
	require.Equal(t, ID{}, next)
	require.Equal(t, uint64(1), g.PendingEntry(ID{1, 4}).DeliveryCount, "JUSTID keeps the count")
	require.Equal(t, 3, g.Consumer("bob").Pending())
	// Not idle enough: examined, not claimed; at most 10 × COUNT examined.
	claimed, _, next = s.AutoClaim(g, "carol", ID{}, 10_000, 1, false, 2500)
	require.Empty(t, claimed)
	require.Equal(t, ID{}, next)
	big := filled(t, 30)
	bg, _ := big.CreateGroup("g", ID{}, 0)
	big.ReadNew(bg, "alice", 0, false, 1000)
	claimed, _, next = big.AutoClaim(bg, "bob", ID{}, 10_000, 2, false, 1500)
	require.Empty(t, claimed)
	require.Equal(t, ID{1, 21}, next)
}
