package s3compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/tools/pyvenv"
)

// boto3Version and botocoreVersion are the releases the test installs from
// PyPI.
const (
	boto3Version    = "1.43.11"
	botocoreVersion = "1.43.11"
)

// boto3Python returns the python of a virtual environment holding boto3.
func boto3Python(t *testing.T) string {
	return pyvenv.Python(t, "boto3", "boto3=="+boto3Version, "botocore=="+botocoreVersion)
}

// TestBoto3 runs testdata/boto3_check.py against the handler: every
// operation, a three-part multipart upload, range reads and a request
// signed with a wrong secret. The script asserts and prints one line per
// check, ending with "boto3 ok".
func TestBoto3(t *testing.T) {
	vpy := boto3Python(t)
	srv, err := StartServer(t.TempDir(), matrixobject.Options{}, map[string]string{testAccessKey: testSecret})
	require.NoError(t, err)
	defer srv.Close()
	script, err := filepath.Abs(filepath.Join("testdata", "boto3_check.py"))
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), vpy, script)
	cmd.Env = append(os.Environ(),
		"S3_ENDPOINT="+srv.URL, "S3_ACCESS_KEY="+testAccessKey, "S3_SECRET_KEY="+testSecret,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	out, err := cmd.CombinedOutput()
	t.Logf("boto3_check.py:\n%s", out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Equal(t, "boto3 ok", lines[len(lines)-1])
	require.Contains(t, string(out), "boto3 version "+boto3Version+" botocore "+botocoreVersion)
	require.Contains(t, string(out), "multipart etag ok")
	require.Contains(t, string(out), "wrong secret rejected: SignatureDoesNotMatch 403")
}
