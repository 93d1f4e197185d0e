package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// flowMap reads a FLOW record reply in either protocol as a map.
func flowMap(t *testing.T, v any) map[string]any {
	t.Helper()
	switch m := v.(type) {
	case map[any]any:
		out := map[string]any{}
		for k, v := range m {
			out[fmt.Sprint(k)] = v
		}
		return out
	case []any:
		require.Zero(t, len(m)%2)
		out := map[string]any{}
		for i := 0; i < len(m); i += 2 {
			out[fmt.Sprint(m[i])] = m[i+1]
		}
		return out
	}
	t.Fatalf("not a record: %#v", v)
	return nil
}

// The FLOW verbs over RESP2 and RESP3 with go-redis: a flow's life, the
// lease rules' errors, batches, blocking claims, policies and schedules.
func TestFlowVerbs(t *testing.T) {
	addr := serveStreams(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := context.Background()
			rc := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
			defer rc.Close()
			p := fmt.Sprint("p", proto, ":")
			do := func(args ...any) (map[string]any, error) {
				v, err := rc.Do(ctx, args...).Result()
				if err != nil {
					return nil, err
				}
				return flowMap(t, v), nil
			}
			r, err := do("FLOW.CREATE", p+"a", "TYPE", "email", "PAYLOAD", "hi", "PRIORITY", "2", "ATTRIBUTE", "tenant", "t1", "PARTITION", "u1")
			require.NoError(t, err)
			require.Equal(t, "queued", r["state"])
			require.Equal(t, "hi", r["payload"])
			require.EqualValues(t, 1, r["version"])
			require.Equal(t, "t1", flowMap(t, r["attributes"])["tenant"])
			_, err = do("FLOW.CREATE", p+"a", "TYPE", "email")
			require.EqualError(t, err, "ERR flow already exists")
			_, err = do("FLOW.CREATE", p+"a", "TYPE", "email", "PAYLOAD", "other", "IDEMPOTENT", "true")
			require.EqualError(t, err, "ERR flow idempotency conflict")
			_, err = do("FLOW.CREATE", p+"b", "TYPE", "email", "STATE", "running")
			require.EqualError(t, err, "ERR flow running state is only entered by FLOW.CLAIM_DUE")
			_, err = do("FLOW.CREATE", p+"b", "TYPE", "email", "PRIORITY", "high")
			require.EqualError(t, err, "ERR value is not an integer or out of range")
			_, err = do("FLOW.CREATE", p+"b", "TYPE", "email", "PRIORITY")
			require.EqualError(t, err, "ERR syntax error")
			_, err = do("FLOW.CREATE", p+"b", "TYPE")
			require.EqualError(t, err, "ERR wrong number of arguments for 'flow.create' command")

			claimed, err := rc.Do(ctx, "FLOW.CLAIM_DUE", "email", "STATE", "queued", "WORKER", "w1", "LEASE_MS", "30000", "LIMIT", "10", "PARTITION", "u1").Slice()
			require.NoError(t, err)
			require.Len(t, claimed, 1)
			c := flowMap(t, claimed[0])
			require.Equal(t, "running", c["state"])
			require.EqualValues(t, 1, c["fencing_token"])
			token := c["lease_token"].(string)

			_, err = do("FLOW.COMPLETE", p+"a", "w0:1:1", "FENCING", "1")
			require.EqualError(t, err, "ERR stale flow lease")
			_, err = do("FLOW.EXTEND_LEASE", p+"a", token, "FENCING", "1", "LEASE_MS", "60000")
			require.NoError(t, err)
			done, err := do("FLOW.COMPLETE", p+"a", token, "FENCING", "1", "RESULT", "sent")
			require.NoError(t, err)
			require.Equal(t, "completed", done["state"])
			again, err := do("FLOW.COMPLETE", p+"a", token, "FENCING", "1", "RESULT", "sent")
			require.NoError(t, err, "a repeated completion is a no-op")
			require.Equal(t, done["version"], again["version"])
			_, err = do("FLOW.CANCEL", p+"a")
			require.EqualError(t, err, "ERR flow is terminal; use FLOW.REWIND")

			hist, err := rc.Do(ctx, "FLOW.HISTORY", p+"a").Slice()
			require.NoError(t, err)
			var kinds []any
			for _, e := range hist {
				kinds = append(kinds, flowMap(t, e)["event"])
			}
			require.Equal(t, []any{"created", "claimed", "lease_extended", "completed"}, kinds)
			v, err := rc.Do(ctx, "FLOW.GET", p+"missing").Result()
			require.ErrorIs(t, err, redis.Nil)
			require.Nil(t, v)

			// Batches: all or nothing on one shard ({tag}), or independent.
			items, err := rc.Do(ctx, "FLOW.CREATE_MANY", "ITEM", "{"+p+"o}1", "TYPE", "job", "ITEM", "{"+p+"o}2", "TYPE", "job", "ATTRIBUTE", "k", "v").Slice()
			require.NoError(t, err)
			require.Len(t, items, 2)
			_, err = rc.Do(ctx, "FLOW.CREATE_MANY", "ITEM", "{"+p+"o}3", "TYPE", "job", "ITEM", "{"+p+"o}1", "TYPE", "job").Result()
			require.EqualError(t, err, "ERR flow already exists (batch item 1)")
			_, err = rc.Do(ctx, "FLOW.GET", "{"+p+"o}3").Result()
			require.ErrorIs(t, err, redis.Nil, "nothing of a failed batch stays")
			items, err = rc.Do(ctx, "FLOW.CREATE_MANY", "INDEPENDENT", "true", "ITEM", "{"+p+"o}3", "TYPE", "job", "ITEM", "{"+p+"o}1", "TYPE", "job").Slice()
			require.NoError(t, err)
			require.Equal(t, "queued", flowMap(t, items[0])["state"])
			require.EqualError(t, items[1].(error), "ERR flow already exists")

			got, err := rc.Do(ctx, "FLOW.CLAIM_DUE", "job", "STATE", "queued", "WORKER", "w", "LEASE_MS", "1000", "LIMIT", "10").Slice()
			require.NoError(t, err)
			require.Len(t, got, 3)
			args := []any{"FLOW.COMPLETE_MANY"}
			for _, g := range got {
				m := flowMap(t, g)
				args = append(args, "ITEM", m["id"], m["lease_token"], "FENCING", fmt.Sprint(m["fencing_token"]))
			}
			items, err = rc.Do(ctx, args...).Slice()
			require.NoError(t, err)
			for _, it := range items {
				require.Equal(t, "completed", flowMap(t, it)["state"])
			}
			none, err := rc.Do(ctx, "FLOW.CLAIM_DUE", "job", "STATE", "queued", "WORKER", "w", "LEASE_MS", "1000", "LIMIT", "10", "BLOCK", "50").Slice()
			require.NoError(t, err)
			require.Empty(t, none)

			// A blocked claim woken by a create on another connection.
			res := make(chan []any, 1)
			go func() {
				bc := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
				defer bc.Close()
				v, err := bc.Do(ctx, "FLOW.CLAIM_DUE", "late", "STATE", "queued", "WORKER", "b", "LEASE_MS", "1000", "LIMIT", "1", "BLOCK", "0").Slice()
				if err != nil {
					v = []any{err}
				}
				res <- v
			}()
			_, err = do("FLOW.CREATE", p+"late", "TYPE", "late")
			require.NoError(t, err)
			woke := <-res
			require.Len(t, woke, 1)
			require.Equal(t, p+"late", flowMap(t, woke[0])["id"])

			pol, err := do("FLOW.POLICY.SET", "job"+p, "MAX_RETRIES", "2", "BACKOFF", "fixed", "BASE_MS", "10", "MODE", "fifo")
			require.NoError(t, err)
			require.EqualValues(t, 1, pol["generation"])
			_, err = do("FLOW.POLICY.SET", "job"+p, "MAX_RETRIES", "3", "EXPECTED_GENERATION", "0")
			require.EqualError(t, err, "ERR flow policy generation mismatch")
			pol, err = do("FLOW.POLICY.GET", "job"+p)
			require.NoError(t, err)
			require.Equal(t, "FIFO", pol["mode"])
			require.Equal(t, "fixed", pol["backoff"])

			s, err := do("FLOW.SCHEDULE.SET", p+"nightly", "TYPE", "report", "EVERY", "86400000", "START_AT", "4102444800000")
			require.NoError(t, err)
			require.Equal(t, "allow", s["overlap"])
			names, err := rc.Do(ctx, "FLOW.SCHEDULE.LIST").StringSlice()
			require.NoError(t, err)
			require.Contains(t, names, p+"nightly")
			n, err := rc.Do(ctx, "FLOW.SCHEDULE.DEL", p+"nightly").Int()
			require.NoError(t, err)
			require.Equal(t, 1, n)
			st, err := do("FLOW.STATS")
			require.NoError(t, err)
			require.Contains(t, st, "due")
		})
	}
}

// A killed server keeps every acknowledged flow change: flows in every
// state come back as they were answered.
func TestFlowsSurviveSIGKILL(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	respAddr := servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", "", "--s3", "", "--shards", "2"}
	srv := servertest.Start(t, bin, args...)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: 3})
	want := map[string]map[string]any{}
	keep := func(v any, err error) map[string]any {
		require.NoError(t, err)
		m := flowMap(t, v)
		want[m["id"].(string)] = m
		return m
	}
	for i := range 12 {
		keep(rc.Do(ctx, "FLOW.CREATE", fmt.Sprint("f", i), "TYPE", "job", "PAYLOAD", fmt.Sprint("p", i)).Result())
	}
	keep(rc.Do(ctx, "FLOW.CREATE", "review", "TYPE", "job", "STATE", "review").Result())
	got, err := rc.Do(ctx, "FLOW.CLAIM_DUE", "job", "STATE", "queued", "WORKER", "w", "LEASE_MS", "600000", "LIMIT", "5").Slice()
	require.NoError(t, err)
	leases := make([]map[string]any, len(got))
	for i, g := range got {
		leases[i] = keep(g, nil)
	}
	call := func(verb string, l map[string]any, extra ...any) map[string]any {
		return keep(rc.Do(ctx, append([]any{verb, l["id"], l["lease_token"], "FENCING", fmt.Sprint(l["fencing_token"])}, extra...)...).Result())
	}
	call("FLOW.COMPLETE", leases[0], "RESULT", "ok")
	call("FLOW.FAIL", leases[1], "ERROR", "bad")
	call("FLOW.RETRY", leases[2], "ERROR", "again")
	keep(rc.Do(ctx, "FLOW.CANCEL", leases[3]["id"], "LEASE_TOKEN", leases[3]["lease_token"], "FENCING", fmt.Sprint(leases[3]["fencing_token"])).Result())
	srv.Kill()
	rc.Close()

	srv = servertest.Start(t, bin, args...)
	defer srv.Stop()
	rc = redis.NewClient(&redis.Options{Addr: respAddr, Protocol: 3})
	defer rc.Close()
	for id, w := range want {
		v, err := rc.Do(ctx, "FLOW.GET", id).Result()
		require.NoError(t, err, id)
		require.Equal(t, w, flowMap(t, v), id)
	}
	// The lease answered before the kill still holds.
	l := leases[4]
	r, err := rc.Do(ctx, "FLOW.COMPLETE", l["id"], l["lease_token"], "FENCING", fmt.Sprint(l["fencing_token"])).Result()
	require.NoError(t, err)
	require.Equal(t, "completed", flowMap(t, r)["state"])
}
