package client

import (
	"context"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
)

// Table runs the common verbs on one table through a Client, each a typed
// call over Execute: what a program writes most often, without building
// Commands. The zero Namespace and Name are the server's default table.
type Table struct {
	c               Client
	Namespace, Name string
}

// On returns the verbs of table namespace/name through c.
func On(c Client, namespace, name string) Table { return Table{c: c, Namespace: namespace, Name: name} }

func (t Table) run(ctx context.Context, c api.Command) (api.Response, error) {
	c.Namespace, c.Table = t.Namespace, t.Name
	return t.c.Execute(ctx, c)
}

// Get returns key's value, and false when it has none (GET).
func (t Table) Get(ctx context.Context, key string) ([]byte, bool, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindGet, Key: []byte(key)})
	return r.Value, r.Found, err
}

// Set stores value under key, expiring after ttl unless it is 0 (SET).
func (t Table) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	_, err := t.run(ctx, api.Command{Kind: api.KindSet, Key: []byte(key), Value: value, TTL: ttl})
	return err
}

// Del removes keys and returns how many existed (DEL).
func (t Table) Del(ctx context.Context, keys ...string) (int64, error) {
	if len(keys) == 1 {
		r, err := t.run(ctx, api.Command{Kind: api.KindDelete, Key: []byte(keys[0])})
		return r.Int, err
	}
	r, err := t.run(ctx, api.Command{Kind: api.KindDeleteKeys, Keys: bytesOf(keys)})
	return r.Int, err
}

// IncrBy adds delta to the integer at key (0 when absent) and returns the
// result (INCRBY; a negative delta decrements).
func (t Table) IncrBy(ctx context.Context, key string, delta int64) (int64, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindIncrBy, Key: []byte(key), Delta: delta})
	return r.Int, err
}

// HGet returns field of the hash at key, and false when it has none (HGET).
func (t Table) HGet(ctx context.Context, key, field string) ([]byte, bool, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindHGet, Key: []byte(key), Args: [][]byte{[]byte(field)}})
	return r.Value, r.Found, err
}

// HSet sets fields of the hash at key (field, value, field, value ...) and
// returns how many are new (HSET).
func (t Table) HSet(ctx context.Context, key string, fieldValues ...string) (int64, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindHSet, Key: []byte(key), Args: bytesOf(fieldValues)})
	return r.Int, err
}

// Z is a sorted-set member and its score.
type Z struct {
	Member string
	Score  float64
}

// ZAdd sets members' scores in the sorted set at key and returns how many
// are new (ZADD).
func (t Table) ZAdd(ctx context.Context, key string, members ...Z) (int64, error) {
	c := api.Command{Kind: api.KindZAdd, Key: []byte(key), Args: make([][]byte, len(members)), Scores: make([]float64, len(members))}
	for i, m := range members {
		c.Args[i], c.Scores[i] = []byte(m.Member), m.Score
	}
	r, err := t.run(ctx, c)
	return r.Int, err
}

// ZRange returns the members of ranks start..stop of the sorted set at key
// (negative ranks count from the end), lowest score first, with their
// scores (ZRANGE … WITHSCORES).
func (t Table) ZRange(ctx context.Context, key string, start, stop int64) ([]Z, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindZRange, Key: []byte(key),
		Range: api.ZRange{By: api.ByRank, Start: start, Stop: stop, WithScores: true}})
	if err != nil {
		return nil, err
	}
	out := make([]Z, len(r.Values))
	for i, v := range r.Values {
		out[i].Member = string(v)
		if i < len(r.Scores) {
			out[i].Score = r.Scores[i]
		}
	}
	return out, nil
}

// FAppend appends points to the feature series at key (FAPPEND).
func (t Table) FAppend(ctx context.Context, key string, points ...api.Point) error {
	_, err := t.run(ctx, api.Command{Kind: api.KindFAppend, Key: []byte(key), Points: points})
	return err
}

// FQuery returns the points of the series at key with timestamps in
// start..end, oldest first (FQUERY).
func (t Table) FQuery(ctx context.Context, key string, start, end int64) ([]api.Point, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindFQuery, Key: []byte(key), Start: start, End: end})
	return r.Points, err
}

// FAgg aggregates the values of the series at key in start..end with
// aggregator (sum, avg, min, max, first, last, count) (FAGG).
func (t Table) FAgg(ctx context.Context, key string, start, end int64, aggregator string) (int64, error) {
	r, err := t.run(ctx, api.Command{Kind: api.KindFAgg, Key: []byte(key), Start: start, End: end, Aggregator: aggregator})
	return r.Int, err
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
