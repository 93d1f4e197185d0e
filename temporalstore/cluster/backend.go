package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// Backends a member's shard logs can live on, as Resolve names them.
const (
	BackendAuto     = "auto"
	BackendObject   = "object"
	BackendSharedFS = "shared-fs"
	BackendRaft     = "raft"
	BackendLocal    = "local"
)

// ErrBackend is returned by Resolve for a backend asked for that cannot be
// had.
var ErrBackend = errors.New("cluster: storage backend")

// BackendOptions are what Resolve chooses from.
type BackendOptions struct {
	// Want is the backend asked for; BackendAuto (or "") takes the first
	// that works of object store, shared filesystem, local disk with
	// Raft (in a cluster), local disk alone.
	Want string
	// Object is a shared object store, or nil; ObjectErr says why one
	// configured could not be reached.
	Object    sharedlog.Store
	ObjectErr error
	// SharedDir is a shared filesystem's directory every member mounts,
	// or "".
	SharedDir string
	// Cluster says the member has peers (Raft is possible).
	Cluster bool
	// Member names this member in the probe Resolve writes.
	Member string
}

// Backend is Resolve's choice.
type Backend struct {
	// Name is one of the Backend constants but BackendAuto.
	Name string
	// Store is the shared store of BackendObject and BackendSharedFS.
	Store sharedlog.Store
	// Reason says why this one: what was tried before it and why it was
	// passed over.
	Reason string
}

// Resolve picks where the shard logs live: an object store, then a shared
// filesystem, then local disks replicated by Raft (in a cluster), then a
// local disk alone. A shared store is probed first (a conditional append
// and a read back); one that fails the probe is passed over, with the
// reason, unless asked for by name, when Resolve fails.
func Resolve(ctx context.Context, o BackendOptions) (Backend, error) {
	var why []string
	pass := func(s string) { why = append(why, s) }
	want := o.Want
	if want == "" {
		want = BackendAuto
	}
	switch want {
	case BackendAuto, BackendObject, BackendSharedFS, BackendRaft, BackendLocal:
	default:
		return Backend{}, fmt.Errorf("%w: unknown backend %q (auto, object, shared-fs, raft, local)", ErrBackend, want)
	}
	if want == BackendAuto || want == BackendObject {
		switch {
		case o.ObjectErr != nil:
			pass("the object store cannot be reached: " + o.ObjectErr.Error())
		case o.Object == nil:
			pass("no object store configured")
		default:
			if err := probe(ctx, o.Object, o.Member); err != nil {
				pass("the object store failed its probe: " + err.Error())
			} else {
				return Backend{Name: BackendObject, Store: o.Object, Reason: reason("the object store answered its probe", why)}, nil
			}
		}
		if want == BackendObject {
			return Backend{}, fmt.Errorf("%w: object: %s", ErrBackend, why[len(why)-1])
		}
	}
	if want == BackendAuto || want == BackendSharedFS {
		if o.SharedDir == "" {
			pass("no shared filesystem directory configured")
		} else if st, err := sharedlog.NewDirStore(o.SharedDir); err != nil {
			pass("the shared directory cannot be used: " + err.Error())
		} else if err := probe(ctx, st, o.Member); err != nil {
			st.Close()
			pass("the shared directory failed its probe: " + err.Error())
		} else {
			abs, _ := filepath.Abs(o.SharedDir)
			return Backend{Name: BackendSharedFS, Store: st, Reason: reason("the shared directory "+abs+" took a locked, synced append", why)}, nil
		}
		if want == BackendSharedFS {
			return Backend{}, fmt.Errorf("%w: shared-fs: %s", ErrBackend, why[len(why)-1])
		}
	}
	if want == BackendAuto || want == BackendRaft {
		if o.Cluster {
			return Backend{Name: BackendRaft, Reason: reason("the member has peers: local disks replicated by Raft", why)}, nil
		}
		pass("no cluster peers")
		if want == BackendRaft {
			return Backend{}, fmt.Errorf("%w: raft: no cluster peers (--cluster-id, --cluster-peers)", ErrBackend)
		}
	}
	return Backend{Name: BackendLocal, Reason: reason("a single node on its local disk", why)}, nil
}

func reason(chose string, passed []string) string {
	if len(passed) == 0 {
		return chose
	}
	s := chose + " ("
	for i, p := range passed {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s + ")"
}

// probe appends to a blob of its own on st, conditionally, reads it back
// and deletes it.
func probe(ctx context.Context, st sharedlog.Store, member string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	name := "probe/" + member + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	want := []byte("temporalstore storage probe")
	if err := st.AppendAt(ctx, name, 0, want); err != nil {
		return err
	}
	defer st.Delete(ctx, name) //nolint:errcheck // a stray probe blob is harmless
	if err := st.AppendAt(ctx, name, 0, want); !errors.Is(err, sharedlog.ErrConflict) {
		return fmt.Errorf("a conditional append at a wrong offset was not refused (%v)", err)
	}
	got := make([]byte, len(want))
	if n, err := st.ReadAt(ctx, name, 0, got); n != len(want) || string(got) != string(want) {
		return fmt.Errorf("read back %d of %d bytes (%v)", n, len(want), err)
	}
	return nil
}
