package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/storagetest"
)

// sharedReplicas are three shards whose logs are one shared log on store.
func sharedReplicas(t *testing.T, store sharedlog.Store, o sharedlog.Options) *replicas {
	r := &replicas{t: t}
	r.open = func(i int) (storage.OpenLogFunc, func()) {
		o := o
		o.Store, o.Member = store, string(rune('a'+i))
		logs, err := sharedlog.New(o)
		require.NoError(t, err)
		return logs.OpenLog, func() {}
	}
	r.leads = func(l storage.Log, _ int) bool { return l.(*sharedlog.Log).Writing() }
	r.startAll()
	return r
}

func TestSharedLogShardsConverge(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		checkConverge(t, sharedReplicas(t, store, sharedlog.Options{LeaseTimeout: 300 * time.Millisecond}))
	})
}

// A replica away while the writer reclaimed the shared segments it had
// not read comes back behind the front, installs the shared snapshot (a
// checkpoint image and the writer's value log) and converges.
func TestSharedLogReplicaBehindTheFrontGetsTheSnapshot(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		r := sharedReplicas(t, store, sharedlog.Options{LeaseTimeout: 300 * time.Millisecond, SegmentBytes: 64 << 10})
		ctx := t.Context()
		lead := r.leader()
		model := map[string]string{}
		set := func(k, v string) {
			require.NoError(t, r.s[lead].Set(ctx, []byte(k), []byte(v), time.Time{}))
			model[k] = v
		}
		for i := range 20 {
			set(fmt.Sprint("k", i%7), fmt.Sprint(i))
		}
		require.Equal(t, model, r.converged(lead))
		down := (lead + 1) % 3
		r.stop(down)
		rnd := rand.New(rand.NewPCG(1, 2))
		for i := range 3000 {
			pad := make([]byte, 500) // incompressible: the value log fills segments
			for j := range pad {
				pad[j] = byte(rnd.Uint32())
			}
			set(fmt.Sprint("k", i%11), fmt.Sprintf("%d-%x", i, pad))
			if i%500 == 499 {
				_, err := r.s[lead].ReclaimLog(ctx)
				require.NoError(t, err)
			}
		}
		wl := r.s[lead].log.(*sharedlog.Log)
		require.Eventually(t, func() bool { return wl.SharedStats().Snapshots > 0 }, 10*time.Second, 5*time.Millisecond, "the writer reclaimed shared segments")
		require.NoError(t, r.s[lead].Delete(ctx, []byte("k0")))
		delete(model, "k0")
		r.start(down)
		require.Equal(t, model, r.converged(lead))
		require.Positive(t, r.s[down].log.(*sharedlog.Log).SharedStats().Snapshots, "caught up from the snapshot")
		set("last", "x")
		require.Equal(t, model, r.converged(lead))
		r.stop(down)
		r.start(down)
		require.Equal(t, model, r.converged(lead))
	})
}
