package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// queueKeys returns the FIFO's queue, oldest first.
func queueKeys(p *FIFO) []uint64 {
	var keys []uint64
	for i := p.t.front(qFIFO); i != none; i = p.t.after(i) {
		keys = append(keys, p.t.nodes[i].key)
	}
	return keys
}

// fifoOp is one step of a FIFO scenario: admit key with cost (0: access
// it; -1: remove it), and the victims that step must report.
type fifoOp struct {
	key     uint64
	cost    int64
	victims []uint64
}

func TestFIFOEvictionOrder(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int64
		ops       []fifoOp
		wantQueue []uint64
	}{
		{
			name:     "the oldest insertion goes first, however often it was read",
			capacity: 3,
			ops: []fifoOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1},
				{key: 1}, {key: 1}, {key: 1}, {key: 3},
				{key: 4, cost: 1, victims: []uint64{1}},
				{key: 5, cost: 1, victims: []uint64{2}},
			},
			wantQueue: []uint64{3, 4, 5},
		},
		{
			name:     "an overwrite keeps the key's place in the queue",
			capacity: 3,
			ops: []fifoOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1},
				{key: 1, cost: 1}, {key: 2, cost: 1},
				{key: 4, cost: 1, victims: []uint64{1}},
			},
			wantQueue: []uint64{2, 3, 4},
		},
		{
			name:     "an overwrite that grows evicts the oldest others, in order, never itself",
			capacity: 4,
			ops: []fifoOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 4, cost: 1},
				{key: 1, cost: 3, victims: []uint64{2, 3}},
			},
			wantQueue: []uint64{1, 4},
		},
		{
			name:     "one heavy newcomer reports its victims oldest first",
			capacity: 5,
			ops: []fifoOp{
				{key: 1, cost: 1}, {key: 2, cost: 2}, {key: 3, cost: 1}, {key: 4, cost: 1},
				{key: 5, cost: 4, victims: []uint64{1, 2, 3}},
			},
			wantQueue: []uint64{4, 5},
		},
		{
			name:     "a removed key leaves no tombstone behind",
			capacity: 3,
			ops: []fifoOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1},
				{key: 2, cost: -1}, {key: 1, cost: -1},
				{key: 4, cost: 1}, {key: 5, cost: 1},
				{key: 6, cost: 1, victims: []uint64{3}},
			},
			wantQueue: []uint64{4, 5, 6},
		},
		{
			name:     "a key removed and admitted again joins the back",
			capacity: 3,
			ops: []fifoOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1},
				{key: 1, cost: -1}, {key: 1, cost: 1},
				{key: 4, cost: 1, victims: []uint64{2}},
			},
			wantQueue: []uint64{3, 1, 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewFIFO(tt.capacity)
			for _, op := range tt.ops {
				switch {
				case op.cost == 0:
					require.True(t, p.Access(op.key))
				case op.cost < 0:
					require.True(t, p.Remove(op.key))
				default:
					victims, err := p.Admit(op.key, op.cost, nil)
					require.NoError(t, err)
					require.Equal(t, op.victims, victims, "admitting %d", op.key)
				}
				require.Len(t, queueKeys(p), p.Len(), "the queue holds exactly the resident entries")
			}
			require.Equal(t, tt.wantQueue, queueKeys(p))
		})
	}
}

func TestFIFOPinnedEntries(t *testing.T) {
	p := NewFIFO(3)
	fill(t, p, 3)
	require.True(t, p.Pin(1))
	require.True(t, p.Pin(1))

	// The pinned oldest entry is skipped: the next oldest goes.
	victims, err := p.Admit(4, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, victims)
	victims, err = p.Admit(5, 2, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{3, 4}, victims)

	// Only pinned cost and the newcomer are left to weigh: no room.
	_, err = p.Admit(6, 3, nil)
	require.ErrorIs(t, err, ErrNoRoom)
	require.Equal(t, []uint64{5}, queueKeys(p), "the pinned entry is off the queue")
	require.True(t, p.Contains(1))

	// Released, the entry rejoins the back of the queue.
	require.True(t, p.Unpin(1))
	require.Equal(t, []uint64{5}, queueKeys(p), "still pinned once")
	require.True(t, p.Unpin(1))
	require.Equal(t, []uint64{5, 1}, queueKeys(p))
	victims, err = p.Admit(7, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{5}, victims)
}

func TestFIFOSetCapacityEvictsOldestFirst(t *testing.T) {
	p := NewFIFO(10)
	fill(t, p, 10)
	require.True(t, p.Pin(2))
	victims, err := p.SetCapacity(4, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 3, 4, 5, 6, 7}, victims)
	require.Equal(t, []uint64{8, 9, 10}, queueKeys(p))
	require.True(t, p.Contains(2))

	victims, err = p.SetCapacity(0, nil)
	require.ErrorIs(t, err, ErrNoRoom)
	require.Equal(t, []uint64{8, 9, 10}, victims)
	require.Equal(t, 1, p.Len())
}
