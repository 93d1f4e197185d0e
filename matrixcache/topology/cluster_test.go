package topology

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClusterZeroValue(t *testing.T) {
	var c Cluster
	r := c.Ring()
	require.NotNil(t, r)
	require.Zero(t, r.Len())
	require.Same(t, r, c.Ring())
	_, err := r.Owner([]byte("k"))
	require.ErrorIs(t, err, ErrNoLiveNodes)

	before, after, err := c.Update(func(r *Ring) (*Ring, error) { return r.Add(uniform(3, 0)...) })
	require.NoError(t, err)
	require.Same(t, r, before)
	require.Same(t, after, c.Ring())
	require.Equal(t, 3, c.Ring().LiveCount())
}

func TestClusterUpdateFailureKeepsRing(t *testing.T) {
	c := NewCluster(mustNew(t, uniform(3, 0)...))
	r := c.Ring()
	_, after, err := c.Update(func(r *Ring) (*Ring, error) { return r.Remove("nope") })
	require.ErrorIs(t, err, ErrUnknownNode)
	require.Nil(t, after)
	require.Same(t, r, c.Ring())
	require.Zero(t, NewCluster(nil).Ring().Len())
}

// Readers place keys while writers change the membership: run with -race.
func TestClusterConcurrentReadersAndWriters(t *testing.T) {
	r, err := New(Options{PointsPerWeight: 16}, uniform(4, 2)...)
	require.NoError(t, err)
	c := NewCluster(r)
	const writers, joins = 4, 25
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for range 4 {
		wg.Go(func() {
			dst := make([]NodeID, 0, 3)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := c.Ring()
				var err error
				dst, err = r.AppendOwners(dst[:0], fmt.Appendf(nil, "key-%d", i), 3)
				if err != nil || len(dst) != 3 {
					errs <- fmt.Errorf("owners %v: %w", dst, err)
					return
				}
			}
		})
	}
	var ww sync.WaitGroup
	for w := range writers {
		ww.Go(func() {
			for i := range joins {
				id := NodeID(fmt.Sprintf("w%d-%d", w, i))
				before, after, err := c.Update(func(r *Ring) (*Ring, error) {
					return r.Add(Node{ID: id, Weight: 1, Domain: fmt.Sprint("zone-", w%3)})
				})
				if err != nil {
					errs <- err
					return
				}
				if after.Len() != before.Len()+1 {
					errs <- errors.New("update lost a concurrent change")
					return
				}
				for _, ho := range Diff(before, after) {
					if ho.To != id {
						errs <- fmt.Errorf("join of %s moved keys to %s", id, ho.To)
						return
					}
				}
			}
		})
	}
	ww.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, 4+writers*joins, c.Ring().Len())
}
