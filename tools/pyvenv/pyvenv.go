// Package pyvenv gives tests a Python with pinned PyPI packages: a virtual
// environment under the user cache directory, created the first time and
// reused after, keyed by the packages' pins.
package pyvenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Python returns the python of a virtual environment holding pins (pip
// requirement specifiers such as "redis==8.1.0"), creating it if needed. A
// marker file written after a complete install tells a finished
// environment from a broken one. Without python3 the test fails (or is
// skipped under -short).
func Python(t testing.TB, name string, pins ...string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if testing.Short() {
			t.Skip("python3 not found (skipped in -short)")
		}
		t.Fatalf("python3 is needed for the %s tests: %v", name, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	key := strings.NewReplacer("==", "-", " ", "", "/", "-").Replace(strings.Join(pins, "-"))
	venv := filepath.Join(cache, "temporalstore-go", name+"-"+key)
	vpy := filepath.Join(venv, "bin", "python")
	marker := filepath.Join(venv, ".installed")
	if _, err := os.Stat(marker); err == nil {
		return vpy
	}
	require.NoError(t, os.RemoveAll(venv))
	require.NoError(t, os.MkdirAll(filepath.Dir(venv), 0o755))
	run := func(name string, args ...string) {
		out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	}
	t.Logf("creating %s", venv)
	run(py, "-m", "venv", venv)
	run(vpy, append([]string{"-m", "pip", "install", "--disable-pip-version-check", "--quiet"}, pins...)...)
	require.NoError(t, os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644))
	return vpy
}
