package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
)

// BGSAVE and POST /backup back the server up while it takes writes, to
// --backup-dir and to an S3 bucket (the server's own S3 API here);
// LASTSAVE and GET /backup follow them; a second backup while one runs is
// refused; each restores into a data directory a new server serves every
// key from.
func TestBackupsOverRESPAndHTTP(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	respAddr, httpAddr, s3Addr := servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", s3Addr, "--shards", "2",
		"--backup-s3-endpoint", "http://"+s3Addr, "--backup-s3-bucket", "backups")
	defer func() { _ = srv.Stop() }()
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c.Close()
	for i := range 3000 {
		require.NoError(t, c.Set(ctx, fmt.Sprint("k", i), strings.Repeat("v", i%500), 0).Err())
	}
	require.NoError(t, c.HSet(ctx, "h", "f", "1").Err())
	// Streams and flows are in the backup too.
	require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: "events", ID: "1-1", Values: []string{"a", "b"}}).Err())
	started := c.LastSave(ctx).Val()

	require.Equal(t, "Background saving started", c.BgSave(ctx).Val())
	require.Eventually(t, func() bool { return c.LastSave(ctx).Val() >= started && backupStatus(t, httpAddr).Backups == 1 }, 30*time.Second, 50*time.Millisecond)
	st := backupStatus(t, httpAddr)
	require.Empty(t, st.LastError)
	require.Positive(t, st.LastBytes)
	require.True(t, strings.HasPrefix(st.LastTarget, filepath.Join(data, "backups")), st.LastTarget)
	_, err := backup.Verify(ctx, backup.NewDir(st.LastTarget), backup.Options{})
	require.NoError(t, err)
	require.Equal(t, "OK", c.Save(ctx).Val(), "SAVE waits for a backup of its own")
	require.Equal(t, 2, backupStatus(t, httpAddr).Backups)

	// Over HTTP, to S3, named; then the same name again is refused.
	code, body := postBackup(t, httpAddr, `{"name":"nightly","to":"s3"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	require.Contains(t, body, "s3://backups/nightly")
	require.Eventually(t, func() bool { s := backupStatus(t, httpAddr); return !s.Running && s.Backups+s.Failures == 3 }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, 3, backupStatus(t, httpAddr).Backups, backupStatus(t, httpAddr).LastError)
	code, _ = postBackup(t, httpAddr, `{"name":"nightly","to":"s3"}`)
	require.Equal(t, http.StatusAccepted, code)
	require.Eventually(t, func() bool { return backupStatus(t, httpAddr).Failures == 1 }, 30*time.Second, 50*time.Millisecond)
	require.Contains(t, backupStatus(t, httpAddr).LastError, "not empty")
	code, body = postBackup(t, httpAddr, `{"name":"../escape"}`)
	require.Equal(t, http.StatusBadRequest, code, body)

	// Restored from S3 while the first server runs, into a data directory
	// a second server opens.
	s3, err := backup.NewS3(ctx, backup.S3Options{Endpoint: "http://" + s3Addr, Bucket: "backups", Prefix: "nightly"})
	require.NoError(t, err)
	defer s3.Close()
	data2 := t.TempDir()
	_, err = backup.Restore(ctx, s3, data2, backup.Options{})
	require.NoError(t, err)
	resp2 := servertest.FreeAddr(t)
	srv2 := servertest.Start(t, bin, "--data", data2, "--resp", resp2, "--http", "", "--s3", "")
	defer func() { _ = srv2.Stop() }()
	c2 := redis.NewClient(&redis.Options{Addr: resp2})
	defer c2.Close()
	for i := range 3000 {
		require.Equal(t, strings.Repeat("v", i%500), c2.Get(ctx, fmt.Sprint("k", i)).Val())
	}
	require.Equal(t, "1", c2.HGet(ctx, "h", "f").Val())
	msgs, err := c2.XRange(ctx, "events", "-", "+").Result()
	require.NoError(t, err)
	require.Equal(t, []redis.XMessage{{ID: "1-1", Values: map[string]any{"a": "b"}}}, msgs)
}

func backupStatus(t *testing.T, httpAddr string) backup.Status {
	t.Helper()
	res, err := http.Get("http://" + httpAddr + "/backup")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var st backup.Status
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	return st
}

func postBackup(t *testing.T, httpAddr, body string) (int, string) {
	t.Helper()
	res, err := http.Post("http://"+httpAddr+"/backup", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
