package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/client"
)

func pseudoRandom(n int, seed uint64) []byte {
	b := make([]byte, n)
	_, err := newContent(int64(n), seed).Read(b)
	if n > 0 && err != nil {
		panic(err)
	}
	return b
}

// Values of every size up to the surfaces' limits go through RESP, HTTP
// and the Go client, and come back after a restart.
func TestLargeValues(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	respAddr, httpAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", "", "--shards", "1"}
	srv := servertest.Start(t, bin, args...)
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: respAddr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rc.Close()
	sizes := []int{0, 1<<20 - 1, 1 << 20, 100 << 20, 512 << 20}
	sums := map[string][32]byte{}
	for _, n := range sizes {
		v := pseudoRandom(n, uint64(n))
		k := fmt.Sprint("resp:", n)
		require.NoError(t, rc.Set(ctx, k, v, 0).Err(), n)
		got, err := rc.Get(ctx, k).Bytes()
		require.NoError(t, err)
		require.True(t, bytes.Equal(v, got), "%d bytes", n)
		sums[k] = sha256.Sum256(v)
		l, err := rc.StrLen(ctx, k).Result()
		require.NoError(t, err)
		require.Equal(t, int64(n), l)
	}
	err := rc.Set(ctx, "over", make([]byte, 512<<20+1), 0).Err()
	require.Error(t, err, "past proto-max-bulk-len")
	require.NoError(t, rc.Ping(ctx).Err(), "the server lives on")

	// GETRANGE and APPEND on a large value.
	part, err := rc.GetRange(ctx, fmt.Sprint("resp:", 100<<20), 50<<20, 50<<20+9).Bytes()
	require.NoError(t, err)
	require.Equal(t, pseudoRandom(50<<20+10, 100<<20)[50<<20:], part)
	n, err := rc.Append(ctx, fmt.Sprint("resp:", 1<<20), "tail").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1<<20+4), n)
	sums[fmt.Sprint("resp:", 1<<20)] = sha256.Sum256(append(pseudoRandom(1<<20, 1<<20), "tail"...))

	// The Go client over HTTP (MessagePack).
	hc, err := client.NewHTTP(client.HTTPOptions{BaseURL: "http://" + httpAddr})
	require.NoError(t, err)
	defer hc.Close()
	for _, n := range sizes {
		v := pseudoRandom(n, uint64(n)+7)
		k := fmt.Sprint("http:", n)
		_, err := hc.Execute(ctx, api.Command{Kind: api.KindSet, Key: []byte(k), Value: v})
		require.NoError(t, err)
		r, err := hc.Execute(ctx, api.Command{Kind: api.KindGet, Key: []byte(k)})
		require.NoError(t, err)
		require.True(t, bytes.Equal(v, r.Value), "%d bytes over HTTP", n)
		sums[k] = sha256.Sum256(v)
	}

	// Overwrite and delete: the files of what is gone go once the log
	// reclaims their records.
	require.NoError(t, rc.Del(ctx, fmt.Sprint("resp:", 512<<20)).Err())
	require.NoError(t, srv.Stop())
	srv = servertest.Start(t, bin, args...)
	defer func() { _ = srv.Stop() }()
	for k, want := range sums {
		if k == fmt.Sprint("resp:", 512<<20) {
			continue
		}
		got, err := rc.Get(ctx, k).Bytes()
		require.NoError(t, err, k)
		require.Equal(t, want, sha256.Sum256(got), k)
	}
	require.ErrorIs(t, rc.Get(ctx, fmt.Sprint("resp:", 512<<20)).Err(), redis.Nil)

	// A backup carries the large values' files: restored, a second server
	// serves them.
	require.Equal(t, "OK", rc.Save(ctx).Val())
	st := backupStatus(t, httpAddr)
	require.Empty(t, st.LastError)
	data2 := t.TempDir()
	_, err = backup.Restore(ctx, backup.NewDir(st.LastTarget), data2, backup.Options{})
	require.NoError(t, err)
	resp2 := servertest.FreeAddr(t)
	srv2 := servertest.Start(t, bin, "--data", data2, "--resp", resp2, "--http", "", "--s3", "")
	defer func() { _ = srv2.Stop() }()
	rc2 := redis.NewClient(&redis.Options{Addr: resp2, ReadTimeout: time.Minute})
	defer rc2.Close()
	k := fmt.Sprint("resp:", 100<<20)
	got, err := rc2.Get(ctx, k).Bytes()
	require.NoError(t, err)
	require.Equal(t, sums[k], sha256.Sum256(got))
}

// A server killed while large values stream in keeps every one it
// acknowledged, and nothing is left behind for what it did not: on
// durable tables (each file synced before its write is acknowledged) and
// on async ones (files synced by the log's interval sync; a killed
// process leaves the page cache, so nothing acknowledged goes either).
func TestLargeValuesSurviveSIGKILL(t *testing.T) {
	bin := buildServer(t)
	for name, extra := range map[string][]string{"durable": nil, "async": {"--async", "--sync-interval", "200ms"}} {
		t.Run(name, func(t *testing.T) { largeValuesSurviveSIGKILL(t, bin, extra) })
	}
}

func largeValuesSurviveSIGKILL(t *testing.T, bin string, extra []string) {
	data := t.TempDir()
	respAddr := servertest.FreeAddr(t)
	args := append([]string{"--data", data, "--resp", respAddr, "--http", "", "--s3", "", "--shards", "2"}, extra...)
	srv := servertest.Start(t, bin, args...)
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	acked := map[string]uint64{}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			rc := redis.NewClient(&redis.Options{Addr: respAddr, MaxRetries: -1, ReadTimeout: time.Minute})
			defer rc.Close()
			for i := 0; ctx.Err() == nil; i++ {
				seed := uint64(w*1000 + i)
				k := fmt.Sprintf("w%d:%d", w, i%4) // overwrites too
				if rc.Set(ctx, k, pseudoRandom(3<<20+int(seed%7)*100_000, seed), 0).Err() != nil {
					return
				}
				mu.Lock()
				acked[k] = seed
				mu.Unlock()
			}
		})
	}
	time.Sleep(2 * time.Second)
	srv.Kill()
	cancel()
	wg.Wait()
	require.NotEmpty(t, acked)

	srv = servertest.Start(t, bin, args...)
	defer func() { _ = srv.Stop() }()
	rc := redis.NewClient(&redis.Options{Addr: respAddr, ReadTimeout: time.Minute})
	defer rc.Close()
	for k, seed := range acked {
		got, err := rc.Get(context.Background(), k).Bytes()
		require.NoError(t, err, k)
		// The last acknowledged write, or one after it (the key's next
		// seeds) that the server took before it died.
		found := false
		for s := seed; s < seed+400 && !found; s += 4 {
			found = bytes.Equal(got, pseudoRandom(3<<20+int(s%7)*100_000, s))
		}
		require.True(t, found, "%s holds neither its acknowledged value nor a later one", k)
	}
	var tmp []string
	require.NoError(t, filepath.WalkDir(filepath.Join(data, "engine"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "large-") && strings.HasSuffix(d.Name(), ".tmp") {
			tmp = append(tmp, p)
		}
		return err
	}))
	require.Empty(t, tmp, "no temporary file is left")
}

// --max-value-bytes bounds a value on every surface, with a clear error,
// and the server lives on.
func TestMaxValueBytes(t *testing.T) {
	bin := buildServer(t)
	respAddr, httpAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", respAddr, "--http", httpAddr, "--s3", "",
		"--max-value-bytes", strconv.Itoa(2<<20))
	defer func() { _ = srv.Stop() }()
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: respAddr})
	defer rc.Close()
	require.NoError(t, rc.Set(ctx, "fits", make([]byte, 2<<20), 0).Err())
	err := rc.Set(ctx, "over", make([]byte, 2<<20+1), 0).Err()
	require.Error(t, err)
	if !strings.Contains(err.Error(), "connection reset") && !strings.Contains(err.Error(), "broken pipe") {
		// The reply, when it arrives before the server closes the
		// connection, as Redis does past proto-max-bulk-len.
		require.ErrorContains(t, err, "invalid bulk length")
	}
	hc, err := client.NewHTTP(client.HTTPOptions{BaseURL: "http://" + httpAddr})
	require.NoError(t, err)
	defer hc.Close()
	_, err = hc.Execute(ctx, api.Command{Kind: api.KindSet, Key: []byte("over"), Value: make([]byte, 4<<20)})
	require.ErrorIs(t, err, api.ErrTooLarge)
	require.NoError(t, rc.Ping(ctx).Err())
	require.Equal(t, int64(0), rc.Exists(ctx, "over").Val())
}

// A GET of a value kept in a file is sent from the file: the same bytes
// as any other reply, in order within a pipeline, through MULTI, Lua and
// CLIENT REPLY OFF (which read it whole), and an expired one is absent. A
// file damaged on the disk is never served as the value: a damaged head
// gets an error reply, damage further in an unfinished reply and a closed
// connection.
func TestLargeValueGETFromFile(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	respAddr, httpAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", "", "--shards", "1", "--large-value-threshold", "65536")
	defer func() { _ = srv.Stop() }()
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: respAddr, ReadTimeout: time.Minute, MaxRetries: -1, PoolSize: 1})
	defer rc.Close()
	big := pseudoRandom(3<<20, 41)
	require.NoError(t, rc.Set(ctx, "big", big, 0).Err())
	require.NoError(t, rc.Set(ctx, "small", "s", 0).Err())
	// Restarted: the record just written is no longer among the recent
	// ones in memory, so reads find it in its file.
	require.NoError(t, srv.Stop())
	srv = servertest.Start(t, bin, "--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", "", "--shards", "1", "--large-value-threshold", "65536")

	got, err := rc.Get(ctx, "big").Bytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, got))

	// Over HTTP, in MessagePack (the Go client) and JSON.
	hc, err := client.NewHTTP(client.HTTPOptions{BaseURL: "http://" + httpAddr})
	require.NoError(t, err)
	defer hc.Close()
	httpGet := func() ([]byte, error) {
		r, err := hc.Execute(ctx, api.Command{Kind: api.KindGet, Key: []byte("big")})
		return r.Value, err
	}
	jsonGet := func() ([]byte, error) {
		res, err := http.Post("http://"+httpAddr+"/execute", "application/json", strings.NewReader(`{"command":{"kind":"string_get","key":"big"}}`))
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var reply struct {
			Status struct {
				OK      bool   `json:"ok"`
				Message string `json:"message"`
			} `json:"status"`
			Response struct {
				Value []int `json:"value"`
			} `json:"response"`
		}
		if err := json.NewDecoder(res.Body).Decode(&reply); err != nil {
			return nil, err
		}
		if !reply.Status.OK {
			return nil, errors.New(reply.Status.Message)
		}
		out := make([]byte, len(reply.Response.Value))
		for i, n := range reply.Response.Value {
			out[i] = byte(n)
		}
		return out, nil
	}
	for _, get := range []func() ([]byte, error){httpGet, jsonGet} {
		got, err := get()
		require.NoError(t, err)
		require.True(t, bytes.Equal(big, got))
	}

	cmds, err := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "small")
		p.Get(ctx, "big")
		p.Set(ctx, "after", "a", 0)
		p.Get(ctx, "big")
		p.Get(ctx, "after")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "s", cmds[0].(*redis.StringCmd).Val())
	require.True(t, bytes.Equal(big, []byte(cmds[1].(*redis.StringCmd).Val())))
	require.True(t, bytes.Equal(big, []byte(cmds[3].(*redis.StringCmd).Val())))
	require.Equal(t, "a", cmds[4].(*redis.StringCmd).Val())

	tx, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "big")
		return nil
	})
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, []byte(tx[0].(*redis.StringCmd).Val())))
	lua, err := rc.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"big"}).Text()
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, []byte(lua)))

	// CLIENT REPLY OFF: the GET sends nothing; REPLY ON answers +OK, the
	// first bytes the connection gets.
	nc, err := net.Dial("tcp", respAddr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$3\r\nOFF\r\n*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$2\r\nON\r\n"))
	require.NoError(t, err)
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(10*time.Second)))
	first := make([]byte, 5)
	_, err = io.ReadFull(nc, first)
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", string(first))

	require.NoError(t, rc.Set(ctx, "short", big, 50*time.Millisecond).Err())
	time.Sleep(100 * time.Millisecond)
	require.ErrorIs(t, rc.Get(ctx, "short").Err(), redis.Nil)

	// Damage on the disk: the file of "big"'s record (its key in its
	// head).
	var path string
	require.NoError(t, filepath.WalkDir(filepath.Join(data, "engine"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "large-") && strings.HasSuffix(d.Name(), ".rec") {
			b, rerr := os.ReadFile(p)
			if rerr == nil && bytes.Contains(b[:32], []byte("big")) && bytes.Contains(b, big[:1000]) {
				path = p
			}
		}
		return err
	}))
	require.NotEmpty(t, path)
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	for name, at := range map[string]int{"head": 100, "middle": len(whole) / 2, "last byte": len(whole) - 1} {
		t.Run(name, func(t *testing.T) {
			damaged := bytes.Clone(whole)
			damaged[at] ^= 1
			require.NoError(t, os.WriteFile(path, damaged, 0o644))
			defer func() { require.NoError(t, os.WriteFile(path, whole, 0o644)) }()
			c := redis.NewClient(&redis.Options{Addr: respAddr, ReadTimeout: time.Minute, MaxRetries: -1})
			defer c.Close()
			got, err := c.Get(ctx, "big").Bytes()
			require.Error(t, err, "a damaged file is not served")
			require.Nil(t, got)
			require.Equal(t, "s", c.Get(ctx, "small").Val(), "the server serves on")
			for _, get := range []func() ([]byte, error){httpGet, jsonGet} {
				_, err := get()
				require.Error(t, err, "a damaged file is not served over HTTP")
			}
		})
	}
	got, err = rc.Get(ctx, "big").Bytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, got))
}
