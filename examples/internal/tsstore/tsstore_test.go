package tsstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

func openEngine(t testing.TB, dir string) *ts.Engine {
	t.Helper()
	e, err := local.Open(context.Background(), ts.Options{Dir: dir, MaintenanceInterval: ts.Disabled})
	require.NoError(t, err)
	return e
}

func put(k, v string) matrixark.Mutation {
	return matrixark.Mutation{Key: []byte(k), Value: []byte(v)}
}

func scan(t *testing.T, s *Store, r matrixark.Range, o matrixark.ReadOpts) []string {
	t.Helper()
	var out []string
	require.NoError(t, s.Scan(t.Context(), r, o, func(k, v []byte) bool {
		out = append(out, string(k)+"="+string(v))
		return true
	}))
	return out
}

// The Store contract, as memstore keeps it: atomic batches (the last write
// of a key wins), point reads, ordered scans both ways, deletes.
func TestStore(t *testing.T) {
	ctx := t.Context()
	e := openEngine(t, t.TempDir())
	defer e.Close()
	s, err := Open(ctx, e, Options{})
	require.NoError(t, err)
	require.True(t, e.HasTable(DefaultNamespace, DefaultTable))

	require.NoError(t, s.Apply(ctx, []matrixark.Mutation{put("ctx:b", "2"), put("ctx:a", "0"), put("ctx:c", "3"), put("ctx:ab", "x"), put("ctx:a", "1")}, matrixark.WriteOpts{Durable: true}))
	require.NoError(t, s.Apply(ctx, []matrixark.Mutation{{Key: []byte("ctx:c"), Delete: true}, {Key: []byte("ctx:zz"), Delete: true}}, matrixark.WriteOpts{}))
	got, err := s.Get(ctx, [][]byte{[]byte("ctx:a"), []byte("ctx:c"), []byte("ctx:b")}, matrixark.ReadOpts{})
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("1"), nil, []byte("2")}, got)

	require.Equal(t, []string{"ctx:a=1", "ctx:ab=x", "ctx:b=2"}, scan(t, s, matrixark.Range{}, matrixark.ReadOpts{}))
	require.Equal(t, []string{"ctx:a=1", "ctx:ab=x"}, scan(t, s, matrixark.PrefixRange([]byte("ctx:a")), matrixark.ReadOpts{}))
	require.Equal(t, []string{"ctx:b=2", "ctx:ab=x"}, scan(t, s, matrixark.Range{Start: []byte("ctx:ab")}, matrixark.ReadOpts{Reverse: true}))

	_, err = s.Get(ctx, make([][]byte, matrixark.MaxGetKeys+1), matrixark.ReadOpts{})
	require.ErrorIs(t, err, matrixark.ErrTooManyKeys)
	require.ErrorIs(t, s.Apply(ctx, []matrixark.Mutation{put("\x00x", "v")}, matrixark.WriteOpts{}), matrixark.ErrInvalid)

	// Scans page through more keys than a page, both ways.
	var many []matrixark.Mutation
	for i := range 3*scanPage + 7 {
		many = append(many, put(fmt.Sprintf("ctx:p:%05d", i), "v"))
	}
	require.NoError(t, s.Apply(ctx, many, matrixark.WriteOpts{}))
	fwd := scan(t, s, matrixark.PrefixRange([]byte("ctx:p:")), matrixark.ReadOpts{})
	require.Len(t, fwd, len(many))
	require.Equal(t, "ctx:p:00000=v", fwd[0])
	rev := scan(t, s, matrixark.PrefixRange([]byte("ctx:p:")), matrixark.ReadOpts{Reverse: true})
	require.Len(t, rev, len(many))
	require.Equal(t, fwd[len(fwd)-1], rev[0])
}

// TestMain runs the child of TestAuditSurvivesKill when it is one: it
// packs on a durable Store, prints the audit's id once Pack has returned,
// and waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("TSSTORE_HELPER_DIR"); dir != "" {
		if err := packAndWait(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

func packAndWait(dir string) error {
	ctx := context.Background()
	e, err := local.Open(ctx, ts.Options{Dir: dir, MaintenanceInterval: ts.Disabled})
	if err != nil {
		return err
	}
	s, err := Open(ctx, e, Options{})
	if err != nil {
		return err
	}
	ark := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}})
	if _, err := ark.Ingest(ctx, "acme", matrixark.Input{SourceID: "runbook", Title: "Checkout", Body: "Customer checkout failed. Payment risk score spiked."}); err != nil {
		return err
	}
	res, err := ark.Pack(ctx, "acme", matrixark.PackRequest{Retrieve: matrixark.Query{Text: "checkout payment"}, Prompt: "Why?", SessionID: "s1", MaxPromptTokens: 200})
	if err != nil {
		return err
	}
	fmt.Printf("AUDIT %s %d\n", res.Audit.AuditID, len(res.Selected))
	time.Sleep(time.Minute)
	return nil
}

// An audit Pack returned survives the process being killed: SIGKILL right
// after the id is printed, reopen, read it back.
func TestAuditSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TSSTORE_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var id string
	var selected int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "AUDIT" {
			id = f[1]
			_, err := fmt.Sscan(f[2], &selected)
			require.NoError(t, err)
			break
		}
	}
	require.NotEmpty(t, id, "the helper printed no audit")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	ctx := t.Context()
	e := openEngine(t, dir)
	defer e.Close()
	s, err := Open(ctx, e, Options{})
	require.NoError(t, err)
	ark := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}})
	a, err := ark.Audit(ctx, "acme", id)
	require.NoError(t, err)
	require.Len(t, a.SelectedRefs, selected)
	require.NotZero(t, selected)
	audits, err := ark.Audits(ctx, "acme", matrixark.AuditQuery{Session: "s1"})
	require.NoError(t, err)
	require.Len(t, audits, 1)

	// The ingested context came back too: the indexes rebuild from it.
	blocks, err := ark.Retrieve(ctx, "acme", matrixark.Query{Text: "checkout"})
	require.NoError(t, err)
	require.NotEmpty(t, blocks)
}
