package temporalstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// expiryAllowed reports whether ec lets an expiry of exp replace cur (zero:
// none).
func expiryAllowed(ec ExpireCond, cur, exp time.Time) bool {
	none := cur.IsZero()
	switch {
	case ec&ExpireIfNone != 0 && !none,
		ec&ExpireIfSet != 0 && none,
		ec&ExpireIfLater != 0 && (none || exp.UnixMilli() <= cur.UnixMilli()),
		ec&ExpireIfEarlier != 0 && !none && exp.UnixMilli() >= cur.UnixMilli():
		return false
	}
	return true
}

// maxStringBytes is the largest string SETRANGE and APPEND may build, as
// Redis's proto-max-bulk-len default.
const maxStringBytes = 512 << 20

// Execute routes c to its shard and runs it. A write returns once it is
// durable (or written, for an async table) and applied. Bad input gets an
// error wrapping ErrInvalid (or the kind's own error) and changes nothing.
func (e *Engine) Execute(ctx context.Context, c Command) (Response, error) {
	return e.executeCopy(ctx, nil, c)
}

// executeCopy runs a pooled copy of c in x: the runners take a pointer,
// which would move every command to the heap; a pooled copy serves
// instead (they keep no pointer to it).
func (e *Engine) executeCopy(ctx context.Context, x *scope, c Command) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	pc := commandPool.Get().(*Command)
	*pc = c
	r, err := e.execute(ctx, x, pc)
	*pc = Command{} // keeps none of the caller's bytes alive
	commandPool.Put(pc)
	return r, err
}

// ExecuteInPlace is Execute for a command the caller lends rather than
// copies (a Command is some 800 bytes): c is the engine's until the call
// returns, which may change it (a family's key becomes its stored key),
// and nothing keeps c afterwards. Pass one that already lives on the heap,
// such as a field of a longer-lived value: the address of a local moves
// that local to the heap on every call.
func (e *Engine) ExecuteInPlace(ctx context.Context, c *Command) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	return e.execute(ctx, nil, c)
}

var commandPool = sync.Pool{New: func() any { return new(Command) }}

// execute runs c in x (nil: outside any transaction).
func (e *Engine) execute(ctx context.Context, x *scope, c *Command) (r Response, err error) {
	// A panic becomes this command's error (panic.go); a closure rather
	// than a call taking &err, which would move err to the heap.
	defer func() {
		if r := recover(); r != nil {
			err = e.recovered(c, r)
		} else if err != nil {
			err = e.shardPanic(c, err)
		}
	}()
	if c.Kind == KindScan {
		return e.scan(ctx, c)
	}
	info := kindInfos[c.Kind]
	if !info.read && e.writes.hooked() {
		defer func() {
			if err == nil {
				e.wrote(ctx, x, c, r)
			}
		}()
	}
	if info.multi != nil {
		r, err := info.multi(ctx, e, x, c)
		return r, engineErr(err)
	}
	if len(c.Key) == 0 {
		return Response{}, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if info.family {
		key, err := storedKey(c)
		if err != nil {
			return Response{}, err
		}
		c.Key = key
	}
	if c.TTL < 0 && c.Kind != KindExpire {
		return Response{}, fmt.Errorf("%w: negative TTL", ErrInvalid)
	}
	if c.KeepTTL && c.TTL != 0 {
		return Response{}, fmt.Errorf("%w: KEEPTTL with a TTL", ErrInvalid)
	}
	if info.run == nil {
		return Response{}, fmt.Errorf("%w: %q", ErrUnknownKind, c.Kind)
	}
	t, i, err := e.route(c)
	if err != nil {
		return Response{}, err
	}
	if c.Dest != nil && (len(c.Dest) == 0 || t.opts.KeyGroup(c.Dest) != t.opts.KeyGroup(c.Key)) {
		if len(c.Dest) == 0 {
			return Response{}, fmt.Errorf("%w: empty destination key", ErrInvalid)
		}
		return Response{}, ErrCrossShard
	}
	if err := e.admitKind(t, i, !info.read, c.Tenant); err != nil {
		return Response{}, err
	}
	if t.opts.DefaultTTL > 0 && c.TTL == 0 && !c.KeepTTL && (c.Kind == KindSet || c.Kind == KindRowWrite) {
		c.TTL = t.opts.DefaultTTL
	}
	r, err = info.run(ctx, e, x.shard(t, i), c)
	return r, engineErr(err)
}

// kindInfo is what execute needs to know of a kind, found by one lookup.
type kindInfo struct {
	run    runner      // a single-key kind's runner
	multi  multiRunner // a kind over several keys
	family bool        // kept under its family key (familyKinds)
	read   bool        // writes nothing (IsReadKind)
}

var kindInfos = func() map[Kind]kindInfo {
	m := map[Kind]kindInfo{}
	set := func(k Kind, f func(*kindInfo)) {
		i := m[k]
		f(&i)
		m[k] = i
	}
	for k, run := range kinds {
		set(k, func(i *kindInfo) { i.run = run })
	}
	for k, run := range multiKinds {
		set(k, func(i *kindInfo) { i.multi = run })
	}
	for k := range familyKinds {
		set(k, func(i *kindInfo) { i.family = true })
	}
	for k := range m {
		set(k, func(i *kindInfo) { i.read = IsReadKind(k) })
	}
	return m
}()

// storedKey is the key c's state is kept under, which routes it: a family
// kind's family key, else c.Key.
func storedKey(c *Command) ([]byte, error) {
	if !familyKinds[c.Kind] {
		return c.Key, nil
	}
	f, ok := ParseFamily(c.Family)
	if !ok {
		return nil, fmt.Errorf("%w: unknown control state family %q (h, cpc, fol)", ErrInvalid, c.Family)
	}
	return FamilyKey(f, c.Key), nil
}

// engineErr gives a shard's errors the engine's names.
func engineErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shard.ErrTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	case errors.Is(err, shard.ErrWrongType):
		return ErrWrongType
	case errors.Is(err, shard.ErrClosed):
		// Its table was dropped, or the engine closed, while it ran.
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// kinds maps every single-key kind to its runner.
var kinds = func() map[Kind]runner {
	m := map[Kind]runner{}
	for _, family := range []map[Kind]runner{stringKinds, keyKinds, hashKinds, setKinds, zsetKinds, listKinds, featureKinds, sequenceKinds, controlKinds, hllKinds, {KindRowWrite: runRowWrite}} {
		for k, r := range family {
			m[k] = r
		}
	}
	return m
}()

// AppendGet is Execute of a KindGet of key in the table (namespace, name;
// "" names the defaults), on behalf of tenant (Command.Tenant; "" for
// none), that appends the value to dst rather than returning a copy of
// its own: a GET's path with neither a Command nor a Response to build,
// and no allocation when dst has room. found is false for an absent or
// expired key; a collection gets ErrWrongType.
func (e *Engine) AppendGet(ctx context.Context, tenant, namespace, name string, key, dst []byte) (out []byte, found bool, err error) {
	return e.appendGet(ctx, nil, tenant, namespace, name, key, dst)
}

func (e *Engine) appendGet(ctx context.Context, x *scope, tenant, namespace, name string, key, dst []byte) (out []byte, found bool, err error) {
	t, i, err := e.keyShard(ctx, namespace, name, key)
	if err != nil {
		return dst, false, err
	}
	if err := e.admitKind(t, i, false, tenant); err != nil {
		return dst, false, err
	}
	return appendString(ctx, x.shard(t, i), dst, key)
}

// keyShard is a single-key read's table and shard index.
func (e *Engine) keyShard(ctx context.Context, namespace, name string, key []byte) (*table, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if len(key) == 0 {
		return nil, 0, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t, err := e.tableNamed(namespace, name)
	if err != nil {
		return nil, 0, err
	}
	return t, t.opts.KeyShard(key), nil
}

// StringFile is a string value kept in a file of its own (a value over
// the large-value threshold, storage.RecordFiles), open for a surface to
// send from the file: Engine.OpenString.
type StringFile struct {
	// File holds the value: Len bytes from Offset.
	File        *os.File
	Offset, Len int64
	verify      func() error
}

// Verify reads the whole file and checks it against the log's record of
// it: a file that fails is not to be served.
func (f *StringFile) Verify() error { return f.verify() }

// WriteTo writes the value to w and checks the file meanwhile, on a
// goroutine of its own. The bytes go to w as an *io.LimitedReader of the
// file (io.Copy, so a connection sends them with sendfile), never through
// a buffer of the value's size; the last byte waits for the check, and a
// failed one ends the write short of it with the check's error, so that
// what w got is never taken for the whole value: a surface then leaves its
// reply unfinished.
func (f *StringFile) WriteTo(w io.Writer) (int64, error) {
	checked := make(chan error, 1)
	go func() { checked <- f.verify() }()
	var n int64
	_, err := f.File.Seek(f.Offset, io.SeekStart)
	send := func(k int64) {
		if err != nil || k <= 0 {
			return
		}
		var m int64
		m, err = io.Copy(w, &io.LimitedReader{R: f.File, N: k})
		n += m
		if err == nil && m != k {
			err = io.ErrUnexpectedEOF
		}
	}
	send(f.Len - 1)
	if cerr := <-checked; err == nil {
		err = cerr
	}
	send(f.Len - n)
	return n, err
}

// Close closes the file.
func (f *StringFile) Close() error { return f.File.Close() }

// OpenString is AppendGet for a value kept in a file of its own: ok is
// true and the file open when the key's value is one; false (nothing
// open) for anything else, which AppendGet then reads. The caller closes
// the file.
func (e *Engine) OpenString(ctx context.Context, tenant, namespace, name string, key []byte) (f *StringFile, ok bool, err error) {
	t, i, err := e.keyShard(ctx, namespace, name, key)
	if err != nil {
		return nil, false, err
	}
	sf, ok, err := t.shards[i].OpenString(key)
	if err != nil || !ok {
		return nil, false, engineErr(err)
	}
	// Admitted once it is this read's path: AppendGet admits the others.
	if err := e.admitKind(t, i, false, tenant); err != nil {
		sf.File.Close()
		return nil, false, err
	}
	return &StringFile{File: sf.File.File, Offset: sf.Offset, Len: sf.Len, verify: sf.File.Verify}, true, nil
}

// getBatch is how many keys AppendGets groups by shard at a time: its
// per-key state lives on the stack.
const getBatch = 64

// GetRead is one key's result of AppendGets: its value is
// dst[Start:End] of the returned buffer when Found.
type GetRead struct {
	Start, End int
	Found      bool
	Err        error
}

// AppendGets is AppendGet of each of keys in the table, in one call: the
// values are appended to dst and reads[i] (len(reads) >= len(keys)) says
// where keys[i]'s is, or its error. The keys of a shard are looked up
// together (shard.AppendStrings), which lets their cache misses overlap:
// the path of a pipeline of GETs.
func (e *Engine) AppendGets(ctx context.Context, tenant, namespace, name string, keys [][]byte, dst []byte, reads []GetRead) []byte {
	fail := func(i int, err error) { reads[i] = GetRead{Start: len(dst), End: len(dst), Err: err} }
	t, err := e.tableNamed(namespace, name)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		for i := range keys {
			fail(i, err)
		}
		return dst
	}
	var (
		sub     [getBatch][]byte
		pos     [getBatch]int
		srs     [getBatch]shard.StringRead
		colls   [getBatch]bool
		done    [getBatch]bool
		shardOf [getBatch]int
	)
	for lo := 0; lo < len(keys); lo += getBatch {
		batch := keys[lo:min(len(keys), lo+getBatch)]
		for i, k := range batch {
			done[i] = false
			if len(k) == 0 {
				fail(lo+i, fmt.Errorf("%w: empty key", ErrInvalid))
				done[i] = true
				continue
			}
			shardOf[i] = t.opts.KeyShard(k)
			// Admission per key, as AppendGet: read limits count GETs.
			if err := e.admitKind(t, shardOf[i], false, tenant); err != nil {
				fail(lo+i, err)
				done[i] = true
			}
		}
		// One pass per shard the batch touches, in the order of first use.
		for first := range batch {
			if done[first] {
				continue
			}
			si := shardOf[first]
			n := 0
			for i := first; i < len(batch); i++ {
				if !done[i] && shardOf[i] == si {
					sub[n], pos[n] = batch[i], i
					n++
				}
			}
			s := t.shards[si]
			dst = s.AppendStrings(ctx, dst, sub[:n], srs[:n], colls[:n])
			for j := range n {
				i := pos[j]
				done[i] = true
				r := srs[j]
				if colls[j] {
					// A collection is WRONGTYPE, or an expired one absent:
					// AppendString's general path tells which.
					start := len(dst)
					out, found, err := appendString(ctx, s, dst, sub[j])
					dst = out
					reads[lo+i] = GetRead{Start: start, End: len(dst), Found: found, Err: err}
					continue
				}
				reads[lo+i] = GetRead{Start: r.Start, End: r.End, Found: r.Found, Err: engineErr(r.Err)}
			}
		}
	}
	return dst
}

// appendString appends key's string value in s to dst; ErrWrongType for a
// collection.
func appendString(ctx context.Context, s *shard.Shard, dst, key []byte) ([]byte, bool, error) {
	out, found, coll, err := s.AppendString(ctx, dst, key)
	switch {
	case err != nil:
		return dst, false, engineErr(err)
	case coll:
		return dst, false, ErrWrongType
	}
	return out, found, nil
}

// getString reads a string value; ErrWrongType for a collection. A value
// kept in a file of its own is read from the file into the one buffer
// returned, not as its whole record and then a copy.
func getString(ctx context.Context, s *shard.Shard, key []byte) ([]byte, bool, error) {
	if v, ok, err := readStringFile(s, key); ok || err != nil {
		return v, ok, err
	}
	v, found, err := appendString(ctx, s, nil, key)
	if found && v == nil {
		v = []byte{} // an empty string, not an absent one
	}
	return v, found, err
}

// readStringFile reads key's value from its file, checked, when it is kept
// in one (shard.OpenString); ok false otherwise.
func readStringFile(s *shard.Shard, key []byte) ([]byte, bool, error) {
	sf, ok, err := s.OpenString(key)
	if err != nil || !ok {
		return nil, false, engineErr(err)
	}
	defer sf.File.Close()
	if err := sf.File.Verify(); err != nil {
		return nil, false, err
	}
	v := make([]byte, sf.Len)
	if _, err := sf.File.ReadAt(v, sf.Offset); err != nil {
		return nil, false, err
	}
	return v, true, nil
}

type runner func(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error)

var stringKinds = map[Kind]runner{
	KindSetBit:   runSetBit,
	KindGetBit:   runGetBit,
	KindBitCount: runBitCount,
	KindBitPos:   runBitPos,
	KindGet: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		v, ok, err := getString(ctx, s, c.Key)
		return Response{Value: v, Found: ok}, err
	},
	KindGetDel: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		var r Response
		err := s.Update(ctx, c.Key, func(old []byte, _ time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
			r.Value, r.Found = cp(old), found
			return nil, time.Time{}, shard.Remove, nil
		})
		return r, err
	},
	KindIncrBy:      runIncrBy,
	KindIncrByFloat: runIncrByFloat,
	KindAppend: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		var r Response
		err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, _ bool) ([]byte, time.Time, shard.Action, error) {
			if len(old)+len(c.Value) > maxStringBytes {
				return nil, exp, shard.Keep, ErrTooLarge
			}
			v := append(append(make([]byte, 0, len(old)+len(c.Value)), old...), c.Value...)
			r.Int = int64(len(v))
			return v, exp, shard.Write, nil
		})
		return r, err
	},
	KindStrLen: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		v, _, err := getString(ctx, s, c.Key)
		return Response{Int: int64(len(v))}, err
	},
	KindGetRange: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		v, _, err := getString(ctx, s, c.Key)
		lo, hi, ok := stringRange(c.Start, c.End, int64(len(v)))
		if !ok {
			return Response{Value: []byte{}}, err
		}
		return Response{Value: v[lo : hi+1]}, err
	},
	KindSetRange: runSetRange,
}

func runIncrBy(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		var n int64
		if found {
			var err error
			if n, err = ParseInt(old); err != nil {
				return nil, exp, shard.Keep, ErrNotInteger
			}
		}
		sum := n + c.Delta
		if (c.Delta > 0 && sum < n) || (c.Delta < 0 && sum > n) {
			return nil, exp, shard.Keep, ErrOverflow
		}
		r.Int = sum
		return strconv.AppendInt(nil, sum, 10), exp, shard.Write, nil
	})
	return r, err
}

func runIncrByFloat(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		v, _, err := addFloat(old, found, c.Value, c.Float, ErrNotFloat)
		if err != nil {
			return nil, exp, shard.Keep, err
		}
		r.Value, r.Found = v, true
		return r.Value, exp, shard.Write, nil
	})
	return r, err
}

func runSetRange(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Start < 0 {
		return Response{}, fmt.Errorf("%w: offset is out of range", ErrInvalid)
	}
	var r Response
	err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		if len(c.Value) == 0 {
			// Redis: an empty value changes nothing, and creates nothing,
			// whatever the offset.
			r.Int = int64(len(old))
			return nil, exp, shard.Keep, nil
		}
		// Compared without adding, which could overflow: the offset may
		// be anything up to MaxInt64.
		if c.Start > maxStringBytes-int64(len(c.Value)) {
			return nil, exp, shard.Keep, ErrTooLarge
		}
		n := max(int64(len(old)), c.Start+int64(len(c.Value)))
		v := make([]byte, n)
		copy(v, old)
		copy(v[c.Start:], c.Value)
		r.Int = n
		return v, exp, shard.Write, nil
	})
	return r, err
}

// redisRange resolves LRANGE's and LTRIM's inclusive bounds over n
// elements: negative bounds count from the end, and the range is clamped.
// ok is false for an empty result.
func redisRange(start, end, n int64) (lo, hi int64, ok bool) {
	if n == 0 {
		return 0, 0, false
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if end < 0 {
		end = n + end
	}
	end = min(end, n-1)
	if start > end || start >= n || end < 0 {
		return 0, 0, false
	}
	return start, end, true
}

// stringRange resolves GETRANGE's bounds over a string of n bytes. It
// differs from redisRange as Redis's does: an end still negative after
// counting from the end is clamped to the first byte, not empty.
func stringRange(start, end, n int64) (lo, hi int64, ok bool) {
	if n == 0 || start < 0 && end < 0 && start > end {
		return 0, 0, false
	}
	start, end = fromEnd(start, n), min(fromEnd(end, n), n-1)
	if start > end {
		return 0, 0, false
	}
	return start, end, true
}

// A table's scan cursor is the shard in its top 12 bits and the shard's own
// cursor, shifted right by 12, below: resuming at a coarser position can
// return a key again but never skip one.
const scanShardBits = 12

func (e *Engine) scan(ctx context.Context, c *Command) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	if c.Count < 0 {
		return Response{}, fmt.Errorf("%w: negative COUNT", ErrInvalid)
	}
	count := c.Count
	if count == 0 {
		count = DefaultScanCount
	}
	t, err := e.table(c)
	if err != nil {
		return Response{}, err
	}
	now := e.opts.Now()
	if !e.tenants.allow(c.Tenant, now) {
		return Response{}, fmt.Errorf("%w: %q", ErrTenantQPS, c.Tenant)
	}
	if !t.adm.read.Load().allow(now) {
		return Response{}, ErrReadQPS
	}
	sh := int(c.Cursor >> (64 - scanShardBits))
	cur := c.Cursor << scanShardBits
	if sh >= len(t.shards) {
		// Past the last shard: the scan is over, as Redis ends a scan
		// from any cursor it did not hand out.
		return Response{}, nil
	}
	var r Response
	looked := 0 // keys looked at: with a suffix, COUNT bounds the work
	for sh < len(t.shards) && looked < count {
		keys, next, err := t.shards[sh].Scan(cur, max(count-looked, 1))
		if err != nil {
			return Response{}, err
		}
		looked += len(keys)
		for _, k := range keys {
			if bytes.HasSuffix(k, c.Suffix) {
				r.Keys = append(r.Keys, k)
			}
		}
		if next == 0 {
			sh, cur = sh+1, 0
			continue
		}
		r.Cursor = uint64(sh)<<(64-scanShardBits) | next>>scanShardBits
		if r.Cursor != c.Cursor {
			return r, nil
		}
		// The shard's cursor moved less than the table cursor can say:
		// keep going in this shard rather than skip anything.
		cur = next
	}
	if sh < len(t.shards) {
		r.Cursor = uint64(sh) << (64 - scanShardBits)
	}
	return r, nil
}
