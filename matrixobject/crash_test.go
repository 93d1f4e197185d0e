package matrixobject

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var crashRounds = flag.Int("crash-rounds", 12, "SIGKILL rounds in TestCrashRecovery")

const crashChildEnv = "MATRIXOBJECT_CRASH_CHILD_DIR"

var crashOptions = Options{MinPartSize: 4 << 10}

const (
	crashBucket  = "crash"
	crashKeys    = 6
	crashWorkers = 3
	crashLog     = "log"
)

// crashContent is the self-describing body of version ver of key: a header
// naming both, whether it was uploaded in parts (and the part size), then
// bytes derived from them. Sizes run from empty to above the 1 MiB chunk and
// past flushEvery, so the pipelined write path and its background flushes
// are crashed too.
func crashContent(key string, ver uint64) (body []byte, partSize int) {
	r := rand.New(rand.NewPCG(ver, uint64(len(key))+uint64(key[len(key)-1])))
	n := r.IntN(64 << 10)
	switch r.IntN(16) {
	case 0:
		n = flushEvery + r.IntN(2*writeStep)
	case 1, 2, 3, 4:
		n = r.IntN(3 << 20)
	}
	if n < 3<<20 && r.IntN(3) == 0 {
		partSize = 4<<10 + r.IntN(8<<10)
	}
	hdr := fmt.Sprintf("%s %d %d|", key, ver, partSize)
	body = make([]byte, len(hdr)+n)
	copy(body, hdr)
	for i := len(hdr); i < len(body); i++ {
		body[i] = byte(r.Uint32())
	}
	return body, partSize
}

func splitParts(body []byte, partSize int) [][]byte {
	var parts [][]byte
	for len(body) > partSize {
		parts = append(parts, body[:partSize])
		body = body[partSize:]
	}
	return append(parts, body)
}

// crashRecord is append number i: its index, length and a pattern.
func crashRecord(i uint64) []byte {
	n := 12 + int(i%97)*7
	b := make([]byte, n)
	binary.LittleEndian.PutUint64(b[0:8], i)
	binary.LittleEndian.PutUint32(b[8:12], uint32(n))
	for j := 12; j < n; j++ {
		b[j] = byte(i) ^ byte(j)
	}
	return b
}

// parseRecords splits an append blob into records and checks each; it
// returns how many whole, valid records it holds in sequence from 0.
func parseRecords(t *testing.T, blob []byte) uint64 {
	var i uint64
	for len(blob) > 0 {
		require.GreaterOrEqual(t, len(blob), 12, "record %d is torn", i)
		n := int(binary.LittleEndian.Uint32(blob[8:12]))
		require.GreaterOrEqual(t, len(blob), n, "record %d is torn", i)
		require.Equal(t, crashRecord(i), blob[:n], "record %d is damaged or out of sequence", i)
		blob = blob[n:]
		i++
	}
	return i
}

// TestCrashChild is the child process of TestCrashRecovery. It overwrites
// keys with puts and multipart uploads and appends to a blob, printing
// "begin <key> <ver>" before and "ack <key> <ver>" after each write, and
// "abegin <i>" / "aack <i>" around each append, until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	ctx := t.Context()
	s, err := Open(dir, crashOptions)
	if err != nil {
		fmt.Printf("open-error %v\n", err)
		os.Exit(3)
	}
	if err := s.CreateBucket(ctx, crashBucket, Quota{}); err != nil && !strings.Contains(err.Error(), "exists") {
		fmt.Printf("bucket-error %v\n", err)
		os.Exit(3)
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		fmt.Fprintf(os.Stdout, format, args...)
		out.Unlock()
	}
	fail := func(what string, err error) {
		say("%s-error %v\n", what, err)
		os.Exit(4)
	}
	base := uint64(time.Now().UnixNano())
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			for seq := uint64(0); time.Now().Before(deadline); seq++ {
				key := fmt.Sprintf("key-%d", (int(seq)*crashWorkers+w)%crashKeys/crashWorkers*crashWorkers+w)
				ver := base + seq
				body, partSize := crashContent(key, ver)
				say("begin %s %d\n", key, ver)
				if partSize == 0 {
					// Odd versions hide bytes.Reader's WriteTo, so both the
					// in-memory and the chunked write paths are crashed.
					var r io.Reader = bytes.NewReader(body)
					if ver%2 == 1 {
						r = struct{ io.Reader }{r}
					}
					if _, err := s.PutObject(ctx, crashBucket, key, r, PutOptions{}); err != nil {
						fail("put", err)
					}
				} else {
					id, err := s.CreateMultipartUpload(ctx, crashBucket, key, PutOptions{})
					if err != nil {
						fail("create", err)
					}
					var done []CompletedPart
					for i, p := range splitParts(body, partSize) {
						pi, err := s.UploadPart(ctx, crashBucket, key, id, i+1, bytes.NewReader(p), PutOptions{})
						if err != nil {
							fail("part", err)
						}
						done = append(done, CompletedPart{PartNumber: i + 1, ETag: pi.ETag})
					}
					if _, err := s.CompleteMultipartUpload(ctx, crashBucket, key, id, done); err != nil {
						fail("complete", err)
					}
				}
				say("ack %s %d\n", key, ver)
			}
		})
	}
	wg.Go(func() {
		size, err := s.AppendBlobSize(ctx, crashBucket, crashLog)
		if err != nil && size != 0 {
			fail("size", err)
		}
		blob := make([]byte, size)
		if _, err := s.ReadAppendBlob(ctx, crashBucket, crashLog, 0, blob); err != nil && size > 0 {
			fail("read", err)
		}
		next := parseRecords(t, blob)
		for i := next; time.Now().Before(deadline); i++ {
			say("abegin %d\n", i)
			if _, err := s.AppendAt(ctx, crashBucket, crashLog, size, crashRecord(i)); err != nil {
				fail("append", err)
			}
			size += int64(len(crashRecord(i)))
			say("aack %d\n", i)
		}
	})
	wg.Wait()
	os.Exit(0)
}

// TestCrashRecovery SIGKILLs the writing child at random moments. After
// each kill it reopens the store and checks: no temporary file is left;
// every key holds exactly its last acknowledged version or the version in
// flight when the child died, byte for byte, with matching SHA-256 and
// ETag; the append blob is a whole sequence of records holding every
// acknowledged append.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[string]uint64{}
	var appendsAcked uint64 // count of records acknowledged
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for round := range *crashRounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		time.AfterFunc(time.Duration(150+r.IntN(400))*time.Millisecond, func() {
			cmd.Process.Signal(syscall.SIGKILL)
		})
		inflight := map[string]uint64{}
		appendsBegun := appendsAcked
		n := 0
		for line := range lines {
			n++
			f := strings.Fields(line)
			if len(f) >= 1 && strings.HasSuffix(f[0], "-error") {
				t.Fatalf("round %d: child failed: %s", round, line)
			}
			switch {
			case len(f) == 3 && (f[0] == "begin" || f[0] == "ack"):
				v, err := strconv.ParseUint(f[2], 10, 64)
				if err != nil {
					continue // a line cut by the kill
				}
				if f[0] == "begin" {
					inflight[f[1]] = v
				} else {
					acked[f[1]] = v
					delete(inflight, f[1])
				}
			case len(f) == 2 && (f[0] == "abegin" || f[0] == "aack"):
				i, err := strconv.ParseUint(f[1], 10, 64)
				if err != nil {
					continue
				}
				if f[0] == "abegin" {
					appendsBegun = i + 1
				} else {
					appendsAcked = i + 1
				}
			}
		}
		require.Error(t, cmd.Wait(), "round %d: the child must die by SIGKILL", round)

		s, err := Open(dir, crashOptions)
		require.NoError(t, err, "round %d", round)
		ents, err := os.ReadDir(filepath.Join(dir, tmpDir))
		require.NoError(t, err)
		require.Empty(t, ents, "round %d: Open leaves no temporary file", round)
		ctx := t.Context()
		for k := range crashKeys {
			key := fmt.Sprintf("key-%d", k)
			obj, err := s.GetObject(ctx, crashBucket, key, GetOptions{})
			if err != nil {
				require.ErrorIs(t, err, ErrNoSuchKey, "round %d key %s", round, key)
				require.Zero(t, acked[key], "round %d: acknowledged %s lost", round, key)
				continue
			}
			var buf bytes.Buffer
			_, err = obj.WriteTo(&buf)
			require.NoError(t, err)
			obj.Close()
			var name string
			var ver uint64
			var ps int
			_, err = fmt.Sscanf(buf.String(), "%s %d %d|", &name, &ver, &ps)
			require.NoError(t, err, "round %d key %s: header", round, key)
			require.Equal(t, key, name)
			require.True(t, ver == acked[key] || ver == inflight[key],
				"round %d key %s: version %d is neither the acknowledged %d nor the in-flight %d", round, key, ver, acked[key], inflight[key])
			want, partSize := crashContent(key, ver)
			require.True(t, bytes.Equal(want, buf.Bytes()), "round %d key %s version %d is torn", round, key, ver)
			require.Equal(t, sha256hex(want), obj.Info.SHA256)
			if partSize == 0 {
				require.Equal(t, md5hex(want), obj.Info.ETag)
			} else {
				require.Equal(t, s3MultipartETag(splitParts(want, partSize)...), obj.Info.ETag)
			}
			acked[key] = ver
		}
		size, err := s.AppendBlobSize(ctx, crashBucket, crashLog)
		if err == nil {
			blob := make([]byte, size)
			_, err = s.ReadAppendBlob(ctx, crashBucket, crashLog, 0, blob)
			require.NoError(t, err)
			got := parseRecords(t, blob)
			require.GreaterOrEqual(t, got, appendsAcked, "round %d: acknowledged appends lost", round)
			require.LessOrEqual(t, got, appendsBegun, "round %d: more appends than were begun", round)
			appendsAcked = got
		} else {
			require.ErrorIs(t, err, ErrNoSuchKey)
			require.Zero(t, appendsAcked)
		}
		_, err = s.SweepUploads(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		t.Logf("round %d: %d lines, %d appends", round, n, appendsAcked)
	}
}
