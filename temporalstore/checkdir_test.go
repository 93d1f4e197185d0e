package temporalstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The checkpoints a closed engine leaves check out, and a damaged copy of
// one does not.
func TestCheckImage(t *testing.T) {
	dir := t.TempDir()
	e, err := testOpen(t.Context(), Options{Dir: dir})
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		_, err := e.Execute(t.Context(), Command{Kind: KindSet, Key: []byte(k), Value: []byte("v-" + k)})
		require.NoError(t, err)
	}
	require.NoError(t, e.Checkpoint(t.Context()))
	require.NoError(t, e.Close())

	imgs, err := filepath.Glob(filepath.Join(dir, "*", "*", "shard-*", "checkpoint-*.img"))
	require.NoError(t, err)
	require.NotEmpty(t, imgs, "Checkpoint wrote an image of every shard")
	for _, img := range imgs {
		applied, err := CheckImage(img)
		require.NoError(t, err, img)
		require.Equal(t, fmt.Sprintf("checkpoint-%020d.img", applied), filepath.Base(img))
	}

	b, err := os.ReadFile(imgs[0])
	require.NoError(t, err)
	b[len(b)/2] ^= 0x10
	bad := filepath.Join(t.TempDir(), filepath.Base(imgs[0]))
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	_, err = CheckImage(bad)
	require.ErrorIs(t, err, ErrImageDamaged)
}
