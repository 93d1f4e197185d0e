package storagetest

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/matrixobject/s3api"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// SharedStores runs test once on each kind of sharedlog.Store, each new
// and empty: a directory, a matrixobject bucket, and a matrixobject bucket
// reached over HTTP (its S3 API, with signed requests).
func SharedStores(t *testing.T, test func(t *testing.T, store sharedlog.Store)) {
	t.Run("dir", func(t *testing.T) {
		s, err := sharedlog.NewDirStore(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		test(t, s)
	})
	t.Run("matrixobject", func(t *testing.T) {
		ob, err := matrixobject.Open(t.TempDir(), matrixobject.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { ob.Close() })
		s, err := sharedlog.NewObjectStore(t.Context(), ob, "shared")
		require.NoError(t, err)
		test(t, s)
	})
	t.Run("s3", func(t *testing.T) {
		ob, err := matrixobject.Open(t.TempDir(), matrixobject.Options{})
		require.NoError(t, err)
		h, err := s3api.New(ob, s3api.Options{Credentials: map[string]string{"AKIDSHARED": "shared-secret"}})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(func() { srv.Close(); ob.Close() })
		s, err := sharedlog.NewS3Store(t.Context(), sharedlog.S3Options{Endpoint: srv.URL, Bucket: "shared", AccessKey: "AKIDSHARED", SecretKey: "shared-secret"})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		test(t, s)
	})
}

// Images stands for a shard's storage.ShardImages in a replicated log's
// tests: its image is Label; installing one runs the log's reset and
// remembers the image.
type Images struct {
	mu        sync.Mutex
	Label     string
	installed []string
}

// CaptureImage returns Label.
func (f *Images) CaptureImage(context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []byte(f.Label), nil
}

// InstallImage runs reset and remembers image.
func (f *Images) InstallImage(image []byte, reset func() error) error {
	if err := reset(); err != nil {
		return err
	}
	f.mu.Lock()
	f.installed = append(f.installed, string(image))
	f.mu.Unlock()
	return nil
}

// Installs returns the images installed, in order.
func (f *Images) Installs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.installed)
}
