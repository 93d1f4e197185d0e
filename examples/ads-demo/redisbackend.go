package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// takeScript grants the first offer whose cap slot and budget charge both
// fit, as one atomic script. KEYS are three an offer (cap counter, spend
// counter, spend ledger); ARGV four (cap, charge, limit, ledger bucket).
// It returns the offer's number from 1, or 0 when none fits.
const takeScript = `
for i = 1, #KEYS / 3 do
  local cap, spend, ledger = KEYS[3*i-2], KEYS[3*i-1], KEYS[3*i]
  local n = tonumber(ARGV[4*i-3])
  local charge = tonumber(ARGV[4*i-2])
  local limit = tonumber(ARGV[4*i-1])
  if tonumber(redis.call('GET', cap) or '0') < n and
     tonumber(redis.call('GET', spend) or '0') + charge <= limit then
    redis.call('INCR', cap)
    redis.call('INCRBY', spend, charge)
    redis.call('HINCRBY', ledger, ARGV[4*i], charge)
    return i
  end
end
return 0
`

// redisStore runs the decisions on redis-server 7: the takes are one Lua
// script (EVALSHA) over every ranked offer, spend is a counter beside a
// hash of ledger buckets, and a user's impressions and clicks are sorted
// sets scored by time whose members name the event, so a retried ZADD adds
// nothing.
type redisStore struct {
	rc   *redis.Client
	take *redis.Script
}

func newRedis(addr string, conns int) *redisStore {
	return &redisStore{rc: newClient(addr, conns), take: redis.NewScript(takeScript)}
}

func (b *redisStore) Close() error { return b.rc.Close() }

func (b *redisStore) Reset(ctx context.Context) error {
	if err := b.rc.FlushAll(ctx).Err(); err != nil {
		return err
	}
	return b.take.Load(ctx, b.rc).Err()
}

func (b *redisStore) Spend(ctx context.Context, into []int64) error {
	keys := make([]string, len(into))
	for c := range keys {
		keys[c] = spendKey(c)
	}
	vals, err := b.rc.MGet(ctx, keys...).Result()
	if err != nil {
		return err
	}
	for c, v := range vals {
		if into[c], err = optInt(v); err != nil {
			return err
		}
	}
	return nil
}

// optInt reads an integer reply that may be nil (no key).
func optInt(v any) (int64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("%w: %v", ErrReply, v)
}

func (b *redisStore) History(ctx context.Context, user int, at int64, into *History) error {
	var imps *redis.StringSliceCmd
	var clicks *redis.IntCmd
	_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		imps = p.ZRangeByScore(ctx, impsKey(user), &redis.ZRangeBy{
			Min: strconv.FormatInt(at-lookbackMs+1, 10), Max: strconv.FormatInt(at, 10),
		})
		clicks = p.ZCount(ctx, clicksKey(user), strconv.FormatInt(at-dayMs+1, 10), strconv.FormatInt(at, 10))
		return nil
	})
	if err != nil {
		return err
	}
	into.Imps, err = parseMembers(imps.Val(), into.Imps[:0])
	into.Clicks = int(clicks.Val())
	return err
}

// member is an impression's sorted-set member: "campaign:charge:time".
func member(imp Imp) string { return impValue(imp) + ":" + strconv.FormatInt(imp.At, 10) }

// parseMembers appends the impressions of members to imps.
func parseMembers(members []string, imps []Imp) ([]Imp, error) {
	for _, m := range members {
		imp, err := parseImp(m)
		if err != nil {
			return imps, err
		}
		i := len(m) - 1
		for i >= 0 && m[i] != ':' {
			i--
		}
		if imp.At, err = strconv.ParseInt(m[i+1:], 10, 64); err != nil {
			return imps, fmt.Errorf("%w: member %q", ErrReply, m)
		}
		imps = append(imps, imp)
	}
	return imps, nil
}

func (b *redisStore) Take(ctx context.Context, user int, at int64, offers []Offer) (int, int, error) {
	if len(offers) == 0 {
		return -1, 0, nil
	}
	keys := make([]string, 0, 3*len(offers))
	args := make([]any, 0, 4*len(offers))
	for i := range offers {
		o := &offers[i]
		keys = append(keys, capKey(user, o), spendKey(o.Campaign), ledgerKey(o.Campaign))
		args = append(args, o.CapN, o.Charge, o.Limit, bucketOf(at))
	}
	n := len(offers)
	won, err := b.take.Run(ctx, b.rc, keys, args...).Int()
	if err != nil {
		return -1, n, err
	}
	if won == 0 {
		return -1, n, nil
	}
	return won - 1, won, nil
}

func (b *redisStore) Record(ctx context.Context, ev Event) (bool, error) {
	key := impsKey(ev.User)
	if ev.Click {
		key = clicksKey(ev.User)
	}
	n, err := b.rc.ZAdd(ctx, key, redis.Z{Score: float64(ev.Imp.At), Member: member(ev.Imp)}).Result()
	return n == 1, err
}

func (b *redisStore) State(ctx context.Context, users, campaigns int) (*State, error) {
	st := newState(users, campaigns)
	err := inBatches(users, func(lo, hi int) error {
		imps := make([]*redis.StringSliceCmd, hi-lo)
		clicks := make([]*redis.IntCmd, hi-lo)
		_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for u := lo; u < hi; u++ {
				imps[u-lo] = p.ZRange(ctx, impsKey(u), 0, -1)
				clicks[u-lo] = p.ZCard(ctx, clicksKey(u))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for u := lo; u < hi; u++ {
			if st.Imps[u], err = parseMembers(imps[u-lo].Val(), nil); err != nil {
				return err
			}
			st.Clicks[u] = int(clicks[u-lo].Val())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ledgers := make([]*redis.MapStringStringCmd, campaigns)
	_, err = b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for c := range campaigns {
			ledgers[c] = p.HGetAll(ctx, ledgerKey(c))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for c, cmd := range ledgers {
		for k, v := range cmd.Val() {
			start, err1 := strconv.ParseInt(k, 10, 64)
			n, err2 := strconv.ParseInt(v, 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%w: ledger field %q=%q", ErrReply, k, v)
			}
			st.Ledger[c] = append(st.Ledger[c], Bucket{Start: start, Spend: n})
		}
	}
	if err := b.Spend(ctx, st.Spend); err != nil {
		return nil, err
	}
	return st, nil
}
