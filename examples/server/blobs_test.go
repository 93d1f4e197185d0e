package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/client"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// content is n deterministic pseudo-random bytes, streamed.
type content struct {
	rng  *rand.PCG
	left int64
	buf  [8]byte
	have int
}

func newContent(n int64, seed uint64) *content { return &content{rng: rand.NewPCG(seed, 5), left: n} }

func (c *content) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.left)]
	for i := range p {
		if c.have == 0 {
			v := c.rng.Uint64()
			for j := range c.buf {
				c.buf[j] = byte(v >> (8 * j))
			}
			c.have = 8
		}
		p[i] = c.buf[8-c.have]
		c.have--
	}
	c.left -= int64(len(p))
	return len(p), nil
}

func digestOf(t *testing.T, r io.Reader) (string, int64) {
	t.Helper()
	h := sha256.New()
	n, err := io.Copy(h, r)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil)), n
}

func blobClient(t *testing.T, httpAddr string) *client.HTTP {
	t.Helper()
	c, err := client.NewHTTP(client.HTTPOptions{BaseURL: "http://" + httpAddr})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// Blobs of every size up to the configured maximum go through the real
// server and the Go client; one past it is refused.
func TestBlobsThroughTheServer(t *testing.T) {
	const maxSize = 160 << 20
	bin := buildServer(t)
	httpAddr := servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", "", "--http", httpAddr, "--s3", "",
		"--blob-max-size", strconv.Itoa(maxSize))
	defer func() { _ = srv.Stop() }()
	c := blobClient(t, httpAddr)
	ctx := t.Context()
	for _, n := range []int64{0, 1<<20 - 1, 1 << 20, 100 << 20, maxSize} {
		sum, _ := digestOf(t, newContent(n, uint64(n)))
		info, err := c.PutBlob(ctx, "ns", "v/"+strconv.FormatInt(n, 10), newContent(n, uint64(n)), sum)
		require.NoError(t, err, n)
		require.Equal(t, n, info.Size)
		require.Equal(t, sum, info.SHA256)
		b, err := c.GetBlob(ctx, "ns", "v/"+strconv.FormatInt(n, 10), nil)
		require.NoError(t, err)
		got, size := digestOf(t, b)
		require.NoError(t, b.Close())
		require.Equal(t, n, size)
		require.Equal(t, sum, got, n)
	}
	_, err := c.PutBlob(ctx, "ns", "over", newContent(maxSize+1, 1), "")
	require.ErrorIs(t, err, api.ErrTooLarge)
	_, err = c.GetBlob(ctx, "ns", "over", nil)
	require.ErrorIs(t, err, wire.ErrNotFound)

	// A range of the 100 MiB blob, and one that selects nothing.
	b, err := c.GetBlob(ctx, "ns", "v/104857600", &client.BlobRange{Start: 50 << 20, End: 50<<20 + 9})
	require.NoError(t, err)
	part, err := io.ReadAll(b)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	all, err := io.ReadAll(io.LimitReader(newContent(100<<20, 100<<20), 50<<20+10))
	require.NoError(t, err)
	require.Equal(t, all[50<<20:], part)
	require.Equal(t, int64(50<<20), b.Offset)
	require.Equal(t, int64(100<<20), b.Info.Size)
	_, err = c.GetBlob(ctx, "ns", "v/0", &client.BlobRange{Suffix: 1})
	require.ErrorIs(t, err, client.ErrRange)

	// Multipart, parts out of order and one sent twice.
	up, err := c.BeginUpload(ctx, "ns", "multi")
	require.NoError(t, err)
	_, err = c.UploadPart(ctx, "ns", "multi", up, 2, newContent(10, 9), "")
	require.NoError(t, err)
	for _, n := range []int{3, 2, 1} {
		_, err := c.UploadPart(ctx, "ns", "multi", up, n, newContent(3<<20, uint64(n)), "")
		require.NoError(t, err)
	}
	_, err = c.UploadPart(ctx, "ns", "multi", up, 4, newContent(10, 1), "0000000000000000000000000000000000000000000000000000000000000000")
	require.ErrorIs(t, err, client.ErrBadDigest)
	info, err := c.CommitUpload(ctx, "ns", "multi", up)
	require.NoError(t, err)
	require.Equal(t, int64(9<<20), info.Size)
	_, err = c.CommitUpload(ctx, "ns", "multi", up)
	require.ErrorIs(t, err, client.ErrNoSuchUpload)

	l, err := c.ListBlobs(ctx, "ns", "v/", "", 2)
	require.NoError(t, err)
	require.Len(t, l.Blobs, 2)
	require.NotEmpty(t, l.Next)
	require.NoError(t, c.DeleteBlob(ctx, "ns", "multi"))
	require.ErrorIs(t, c.DeleteBlob(ctx, "ns", "multi"), wire.ErrNotFound)
	_, err = c.SweepBlobs(ctx)
	require.NoError(t, err)
}

// A server killed while a blob streams in keeps every acknowledged blob
// and part, and no partial blob appears.
func TestBlobUploadSurvivesSIGKILL(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	httpAddr := servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", "", "--http", httpAddr, "--s3", ""}
	srv := servertest.Start(t, bin, args...)
	c := blobClient(t, httpAddr)
	ctx := t.Context()
	sum, _ := digestOf(t, newContent(8<<20, 7))
	_, err := c.PutBlob(ctx, "ns", "kept", newContent(8<<20, 7), sum)
	require.NoError(t, err)
	up, err := c.BeginUpload(ctx, "ns", "parts")
	require.NoError(t, err)
	_, err = c.UploadPart(ctx, "ns", "parts", up, 1, newContent(1<<20, 1), "")
	require.NoError(t, err)

	// A 100 MiB put that the server dies in the middle of.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := c.PutBlob(ctx, "ns", "cut", pr, "")
		done <- err
	}()
	_, err = io.CopyN(pw, newContent(100<<20, 3), 20<<20)
	require.NoError(t, err)
	srv.Kill()
	pw.CloseWithError(errors.New("the server is gone"))
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the cut put did not end")
	}

	srv = servertest.Start(t, bin, args...)
	defer func() { _ = srv.Stop() }()
	b, err := c.GetBlob(ctx, "ns", "kept", nil)
	require.NoError(t, err)
	got, _ := digestOf(t, b)
	require.NoError(t, b.Close())
	require.Equal(t, sum, got)
	_, err = c.GetBlob(ctx, "ns", "cut", nil)
	require.ErrorIs(t, err, wire.ErrNotFound, "no partial blob")
	left, err := os.ReadDir(filepath.Join(data, "blobs", "tmp"))
	require.NoError(t, err)
	require.Empty(t, left, "the cut put's temporary file is gone")
	_, err = c.UploadPart(ctx, "ns", "parts", up, 2, newContent(5, 2), "")
	require.NoError(t, err, "the upload outlived the crash")
	info, err := c.CommitUpload(ctx, "ns", "parts", up)
	require.NoError(t, err)
	require.Equal(t, int64(1<<20+5), info.Size)
	_, err = c.SweepBlobs(ctx)
	require.NoError(t, err)

	// A backup carries the blobs: restored, a second server serves them.
	code, body := postBackup(t, httpAddr, `{"name":"withblobs"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	require.Eventually(t, func() bool { s := backupStatus(t, httpAddr); return !s.Running && s.Backups+s.Failures == 1 }, 30*time.Second, 50*time.Millisecond)
	st := backupStatus(t, httpAddr)
	require.Equal(t, 1, st.Backups, st.LastError)
	data2 := t.TempDir()
	_, err = backup.Restore(ctx, backup.NewDir(st.LastTarget), data2, backup.Options{})
	require.NoError(t, err)
	http2 := servertest.FreeAddr(t)
	srv2 := servertest.Start(t, bin, "--data", data2, "--resp", "", "--http", http2, "--s3", "")
	defer func() { _ = srv2.Stop() }()
	c2 := blobClient(t, http2)
	for key, want := range map[string]string{"kept": sum, "parts": info.SHA256} {
		b, err := c2.GetBlob(ctx, "ns", key, nil)
		require.NoError(t, err, key)
		got, _ := digestOf(t, b)
		require.NoError(t, b.Close())
		require.Equal(t, want, got, key)
	}
}

// A server killed while it sweeps expired uploads leaves each upload whole
// or gone, never half removed, and every blob as it was; the next sweep
// finishes the work.
func TestBlobSweepSurvivesSIGKILL(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	httpAddr := servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", "", "--http", httpAddr, "--s3", "", "--blob-sweep", "0"}
	srv := servertest.Start(t, bin, args...)
	c := blobClient(t, httpAddr)
	ctx := t.Context()
	sums := map[string]string{}
	for i := range 3 {
		k := "kept-" + strconv.Itoa(i)
		sum, _ := digestOf(t, newContent(1<<20, uint64(i)))
		_, err := c.PutBlob(ctx, "ns", k, newContent(1<<20, uint64(i)), sum)
		require.NoError(t, err)
		sums[k] = sum
	}
	const uploads = 600
	ids := map[string]string{} // upload → key
	for i := range uploads {
		k := "up-" + strconv.Itoa(i)
		id, err := c.BeginUpload(ctx, "ns", k)
		require.NoError(t, err)
		_, err = c.UploadPart(ctx, "ns", k, id, 1, newContent(4<<10, uint64(100+i)), "")
		require.NoError(t, err)
		ids[id] = k
	}
	require.NoError(t, srv.Stop())

	// Two days old: every upload is the sweep's.
	for id := range ids {
		p := filepath.Join(data, "blobs", "uploads", id, "upload.json")
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		var meta map[string]any
		require.NoError(t, json.Unmarshal(raw, &meta))
		meta["started"] = time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339Nano)
		raw, err = json.Marshal(meta)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, raw, 0o644))
	}
	srv = servertest.Start(t, bin, args...)
	go func() { _, _ = c.SweepBlobs(ctx) }()
	// Killed once the sweep has removed its first uploads.
	require.Eventually(t, func() bool {
		ents, err := os.ReadDir(filepath.Join(data, "blobs", "uploads"))
		return err == nil && len(ents) < uploads
	}, 10*time.Second, 200*time.Microsecond)
	srv.Kill()

	srv = servertest.Start(t, bin, args...)
	defer func() { _ = srv.Stop() }()
	ents, err := os.ReadDir(filepath.Join(data, "blobs", "tmp"))
	require.NoError(t, err)
	require.Empty(t, ents, "no half-removed upload left in tmp")
	for k, sum := range sums {
		b, err := c.GetBlob(ctx, "ns", k, nil)
		require.NoError(t, err)
		got, _ := digestOf(t, b)
		require.NoError(t, b.Close())
		require.Equal(t, sum, got, k)
	}
	left, err := os.ReadDir(filepath.Join(data, "blobs", "uploads"))
	require.NoError(t, err)
	t.Logf("%d of %d uploads left by the cut sweep", len(left), uploads)
	committed := 0
	for _, e := range left {
		k := ids[e.Name()]
		require.NotEmpty(t, k, "an upload the test began")
		if committed == 10 {
			break
		}
		info, err := c.CommitUpload(ctx, "ns", k, e.Name())
		require.NoError(t, err, "a left upload is whole")
		require.Equal(t, int64(4<<10), info.Size)
		committed++
	}
	rep, err := c.SweepBlobs(ctx)
	require.NoError(t, err)
	require.Equal(t, len(left)-committed, rep.Uploads)
	left, err = os.ReadDir(filepath.Join(data, "blobs", "uploads"))
	require.NoError(t, err)
	require.Empty(t, left)
}
