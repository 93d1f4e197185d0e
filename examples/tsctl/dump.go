package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// Sizes of export's and import's steps.
const (
	// scanCount is SCAN's COUNT hint, and the keys read in one pipeline.
	scanCount = 500
	// importBatch is the records written in one pipeline.
	importBatch = 500
	// argsPerCommand bounds the members, fields or items one write
	// carries, so that a large collection is written in several commands.
	argsPerCommand = 1000
	// streamPage is the entries one XRANGE reads.
	streamPage = 1000
)

// redisClient connects to --resp, authenticating with --token. It speaks
// RESP2, whose replies are bulk strings, so that every value arrives as
// its exact bytes.
func (a *app) redisClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: a.respAddr, Password: a.token, Protocol: 2, DB: 0,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute})
}

// dumpResult is export's and import's result.
type dumpResult struct {
	OK   bool   `json:"ok"`
	File string `json:"file"`
	// Keys counts the keys exported, or the lines imported; ByType counts
	// them by type.
	Keys   int            `json:"keys"`
	ByType map[string]int `json:"by_type"`
	Bytes  int64          `json:"bytes"`
	// Written and Existing count import's keys written and those skipped
	// because they exist (without --replace).
	Written  int `json:"written,omitempty"`
	Existing int `json:"existing,omitempty"`
	// Vanished counts export's keys deleted or expired between SCAN and
	// their read; Unsupported its keys of types it cannot export.
	Vanished    int            `json:"vanished,omitempty"`
	Unsupported map[string]int `json:"unsupported,omitempty"`
	Took        time.Duration  `json:"took_ns"`
}

func (a *app) exportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every key of a running server's database 0 to a JSON Lines file",
		Long: "export SCANs database 0 over RESP (--resp) and writes one JSON object a key, with its type, its TTL " +
			"and its value: strings, hashes, sets, sorted sets, lists, feature series and streams (see tsctl's " +
			"package documentation for the format; bytes that are not UTF-8 are base64). Keys written during the " +
			"export may or may not be in it. --out - writes to stdout (the result then goes to stderr).",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("%w: export needs --out FILE (or - for stdout)", errUsage)
			}
			return a.runExport(cmd.Context(), out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the file to write, - for stdout")
	return cmd
}

func (a *app) runExport(ctx context.Context, out string) error {
	started := time.Now()
	rc := a.redisClient()
	defer rc.Close()
	total, err := rc.DBSize(ctx).Result()
	if err != nil {
		return fmt.Errorf("DBSIZE: %w", err)
	}
	var w io.Writer
	var f *os.File
	resultTo := a.stdout
	if out == "-" {
		w, resultTo = a.stdout, a.stderr
	} else {
		// Written under a temporary name and renamed once whole, so that
		// a failed export leaves no file that looks complete.
		f, err = os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".*.tmp")
		if err != nil {
			return err
		}
		defer func() {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countingWriter{w: bw}
	res := &dumpResult{File: out, ByType: map[string]int{}, Unsupported: map[string]int{}}
	b := a.newBar("export", total, false)
	var cursor uint64
	for {
		var keys []string
		keys, cursor, err = rc.Scan(ctx, cursor, "", scanCount).Result()
		if err != nil {
			b.finish(false)
			return fmt.Errorf("SCAN: %w", err)
		}
		recs, err := readKeys(ctx, rc, keys, res)
		if err != nil {
			b.finish(false)
			return err
		}
		for _, r := range recs {
			line, err := r.marshal()
			if err != nil {
				b.finish(false)
				return fmt.Errorf("key %q: %w", r.Key, err)
			}
			if _, err := cw.Write(append(line, '\n')); err != nil {
				b.finish(false)
				return err
			}
			res.Keys++
			res.ByType[r.Type]++
		}
		b.add(int64(len(keys)))
		if cursor == 0 {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		b.finish(false)
		return err
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			b.finish(false)
			return err
		}
		if err := f.Close(); err != nil {
			b.finish(false)
			return err
		}
		if err := os.Rename(f.Name(), out); err != nil {
			b.finish(false)
			return err
		}
		f = nil
	}
	b.finish(true)
	res.OK, res.Bytes, res.Took = true, cw.n, time.Since(started)
	if len(res.Unsupported) == 0 {
		res.Unsupported = nil
	}
	a.emitTo(resultTo, res, func(w io.Writer) {
		fmt.Fprintf(w, "exported %d keys (%s) to %s: %s in %s\n", res.Keys, countsText(res.ByType), out, humanBytes(res.Bytes), res.Took.Round(time.Millisecond))
		if res.Vanished > 0 {
			fmt.Fprintf(w, "%d keys were deleted or expired while exporting\n", res.Vanished)
		}
		if len(res.Unsupported) > 0 {
			fmt.Fprintf(w, "not exported, of types tsctl does not know: %s\n", countsText(res.Unsupported))
		}
	})
	return nil
}

// countsText is "3 string, 1 hash", in name order.
func countsText(m map[string]int) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", m[k], k)
	}
	if s == "" {
		return "none"
	}
	return s
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// readKeys reads keys' types, TTLs and values, in two pipelines: a key
// deleted meanwhile is left out (counted in res.Vanished).
func readKeys(ctx context.Context, rc *redis.Client, keys []string, res *dumpResult) ([]*record, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	pipe := rc.Pipeline()
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		types[i] = pipe.Type(ctx, k)
		ttls[i] = pipe.PTTL(ctx, k)
	}
	// Each reply is checked below: a type whose keys take no TTL may
	// answer PTTL with an error, which only means none.
	_, _ = pipe.Exec(ctx)
	recs := make([]*record, 0, len(keys))
	reads := make([]*redis.Cmd, 0, len(keys))
	pipe = rc.Pipeline()
	for i, k := range keys {
		typ, err := types[i].Result()
		if err != nil {
			return nil, fmt.Errorf("TYPE %q: %w", k, err)
		}
		r := &record{Key: k, Type: typ}
		if ttl, err := ttls[i].Result(); err == nil && ttl > 0 {
			// go-redis reads PTTL as a Duration of milliseconds.
			r.TTLMillis = max(ttl.Milliseconds(), 1)
		}
		var args []any
		switch typ {
		case "none":
			res.Vanished++
			continue
		case "string":
			args = []any{"GET", k}
		case "hash":
			args = []any{"HGETALL", k}
		case "set":
			args = []any{"SMEMBERS", k}
		case "zset":
			args = []any{"ZRANGE", k, 0, -1, "WITHSCORES"}
		case "list":
			args = []any{"LRANGE", k, 0, -1}
		case "series":
			args = []any{"FQUERY", k, 0, int64(math.MaxInt64)}
		case "stream":
			args = []any{"XRANGE", k, "-", "+", "COUNT", streamPage}
		default:
			res.Unsupported[typ]++
			continue
		}
		recs = append(recs, r)
		reads = append(reads, pipe.Do(ctx, args...))
	}
	if len(reads) > 0 {
		_, _ = pipe.Exec(ctx) // each reply is checked by fillRecord
	}
	out := recs[:0]
	for i, r := range recs {
		ok, err := fillRecord(ctx, rc, r, reads[i])
		if err != nil {
			return nil, fmt.Errorf("reading %s %q: %w", r.Type, r.Key, err)
		}
		if !ok {
			res.Vanished++
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// fillRecord sets r's value from its read's reply; false when the key
// was gone (deleted between TYPE and the read).
func fillRecord(ctx context.Context, rc *redis.Client, r *record, c *redis.Cmd) (bool, error) {
	v, err := c.Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch r.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return false, fmt.Errorf("GET replied %T", v)
		}
		r.Value = &s
		return true, nil
	case "hash":
		flat, err := strs(v)
		if err != nil || len(flat)%2 != 0 {
			return false, fmt.Errorf("HGETALL reply: %v", err)
		}
		r.Fields = make(map[string]string, len(flat)/2)
		for i := 0; i < len(flat); i += 2 {
			r.Fields[flat[i]] = flat[i+1]
		}
		return len(flat) > 0, nil
	case "set":
		m, err := strs(v)
		r.Members = m
		return len(m) > 0, err
	case "list":
		l, err := strs(v)
		r.Items = l
		return len(l) > 0, err
	case "zset":
		flat, err := strs(v)
		if err != nil || len(flat)%2 != 0 {
			return false, fmt.Errorf("ZRANGE reply: %v", err)
		}
		for i := 0; i < len(flat); i += 2 {
			f, err := strconv.ParseFloat(flat[i+1], 64)
			if err != nil {
				return false, fmt.Errorf("score %q: %w", flat[i+1], err)
			}
			r.Scores = append(r.Scores, scored{Member: flat[i], Score: score(f)})
		}
		return len(flat) > 0, nil
	case "series":
		pts, ok := v.([]any)
		if !ok {
			return false, fmt.Errorf("FQUERY replied %T", v)
		}
		for _, p := range pts {
			pair, ok := p.([]any)
			if !ok || len(pair) != 2 {
				return false, fmt.Errorf("FQUERY point %v", p)
			}
			ts, ok1 := pair[0].(int64)
			val, ok2 := pair[1].(string)
			if !ok1 || !ok2 {
				return false, fmt.Errorf("FQUERY point %v", p)
			}
			r.Points = append(r.Points, point{TS: ts, Value: val})
		}
		return len(r.Points) > 0, nil
	case "stream":
		return readStream(ctx, rc, r, v)
	}
	return false, fmt.Errorf("type %q", r.Type)
}

// readStream sets r's entries from XRANGE's first page v and the pages
// after it.
func readStream(ctx context.Context, rc *redis.Client, r *record, v any) (bool, error) {
	for {
		page, ok := v.([]any)
		if !ok {
			return false, fmt.Errorf("XRANGE replied %T", v)
		}
		for _, e := range page {
			ent, ok := e.([]any)
			if !ok || len(ent) != 2 {
				return false, fmt.Errorf("XRANGE entry %v", e)
			}
			id, ok := ent[0].(string)
			if !ok {
				return false, fmt.Errorf("XRANGE entry ID %v", ent[0])
			}
			fields, err := strs(ent[1])
			if err != nil {
				return false, err
			}
			r.Entries = append(r.Entries, streamEntry{ID: id, Fields: fields})
		}
		if len(page) < streamPage {
			break
		}
		var err error
		v, err = rc.Do(ctx, "XRANGE", r.Key, "("+r.Entries[len(r.Entries)-1].ID, "+", "COUNT", streamPage).Result()
		if err != nil {
			return false, err
		}
	}
	return len(r.Entries) > 0, nil
}

// strs is a RESP2 array of bulk strings.
func strs(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("reply is %T, not an array", v)
	}
	out := make([]string, len(a))
	for i, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("array element is %T, not a string", x)
		}
		out[i] = s
	}
	return out, nil
}

func (a *app) importCmd() *cobra.Command {
	var in string
	var replace bool
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write the keys of an export file back into a running server",
		Long: "import reads export's JSON Lines (--in FILE, or - for stdin) and writes each key into database 0 over " +
			"RESP, pipelined, restoring its TTL. A key that exists is left alone and counted, unless --replace " +
			"deletes it first.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" {
				return fmt.Errorf("%w: import needs --in FILE (or - for stdin)", errUsage)
			}
			return a.runImport(cmd.Context(), in, replace)
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "the file to read, - for stdin")
	cmd.Flags().BoolVar(&replace, "replace", false, "overwrite keys that exist (default: skip them)")
	return cmd
}

func (a *app) runImport(ctx context.Context, in string, replace bool) error {
	started := time.Now()
	var src io.Reader = a.stdin
	total := int64(-1)
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			total = fi.Size()
		}
		src = f
	}
	rc := a.redisClient()
	defer rc.Close()
	if err := rc.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("PING: %w", err)
	}
	b := a.newBar("import", total, true)
	cr := &countingReader{r: src}
	br := bufio.NewReaderSize(cr, 1<<20)
	res := &dumpResult{File: in, ByType: map[string]int{}}
	var batch []*record
	flush := func() error {
		if err := writeBatch(ctx, rc, batch, replace, res); err != nil {
			return err
		}
		batch = batch[:0]
		b.set(cr.n-int64(br.Buffered()), 0)
		return nil
	}
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !isBlank(line) {
			r := &record{}
			if err := r.unmarshal(line); err != nil {
				b.finish(false)
				return fmt.Errorf("%s line %d: %w", in, lineNo, err)
			}
			batch = append(batch, r)
			res.Keys++
			res.ByType[r.Type]++
			if len(batch) >= importBatch {
				if err := flush(); err != nil {
					b.finish(false)
					return err
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.finish(false)
			return err
		}
	}
	if err := flush(); err != nil {
		b.finish(false)
		return err
	}
	b.finish(true)
	res.OK, res.Bytes, res.Took = true, cr.n, time.Since(started)
	a.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "imported %d keys (%s) from %s: %d written, %d existing left alone, in %s\n",
			res.Keys, countsText(res.ByType), in, res.Written, res.Existing, res.Took.Round(time.Millisecond))
	})
	return nil
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// writeBatch writes recs in one pipeline (after one of EXISTS, without
// replace), each key's commands in order: DEL with replace, its writes,
// then PEXPIRE.
func writeBatch(ctx context.Context, rc *redis.Client, recs []*record, replace bool, res *dumpResult) error {
	if len(recs) == 0 {
		return nil
	}
	skip := make([]bool, len(recs))
	if !replace {
		pipe := rc.Pipeline()
		exists := make([]*redis.IntCmd, len(recs))
		for i, r := range recs {
			exists[i] = pipe.Exists(ctx, r.Key)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("EXISTS: %w", err)
		}
		for i := range recs {
			skip[i] = exists[i].Val() > 0
		}
	}
	type sent struct {
		key string
		cmd *redis.Cmd
	}
	var cmds []sent
	pipe := rc.Pipeline()
	do := func(key string, args ...any) { cmds = append(cmds, sent{key, pipe.Do(ctx, args...)}) }
	for i, r := range recs {
		if skip[i] {
			res.Existing++
			continue
		}
		if replace {
			do(r.Key, "DEL", r.Key)
		}
		if err := writeCommands(r, do); err != nil {
			return err
		}
		if r.TTLMillis > 0 {
			do(r.Key, "PEXPIRE", r.Key, r.TTLMillis)
		}
		res.Written++
	}
	if len(cmds) == 0 {
		return nil
	}
	_, _ = pipe.Exec(ctx) // each command's error is checked below
	for _, c := range cmds {
		if err := c.cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("key %q: %s: %w", c.key, c.cmd.Args()[0], err)
		}
	}
	return nil
}

// writeCommands queues the commands that write r's value, large
// collections in several.
func writeCommands(r *record, do func(key string, args ...any)) error {
	chunked := func(verb string, n int, arg func(i int) []any) {
		for lo := 0; lo < n; lo += argsPerCommand {
			args := []any{verb, r.Key}
			for i := lo; i < min(n, lo+argsPerCommand); i++ {
				args = append(args, arg(i)...)
			}
			do(r.Key, args...)
		}
	}
	switch r.Type {
	case "string":
		if r.Value == nil {
			return fmt.Errorf("key %q: a string without a value", r.Key)
		}
		do(r.Key, "SET", r.Key, *r.Value)
	case "hash":
		fields := slices.Sorted(maps.Keys(r.Fields))
		chunked("HSET", len(fields), func(i int) []any { return []any{fields[i], r.Fields[fields[i]]} })
	case "set":
		chunked("SADD", len(r.Members), func(i int) []any { return []any{r.Members[i]} })
	case "zset":
		chunked("ZADD", len(r.Scores), func(i int) []any { return []any{r.Scores[i].Score.String(), r.Scores[i].Member} })
	case "list":
		chunked("RPUSH", len(r.Items), func(i int) []any { return []any{r.Items[i]} })
	case "series":
		for _, p := range r.Points {
			do(r.Key, "FAPPEND", r.Key, p.TS, p.Value)
		}
	case "stream":
		for _, e := range r.Entries {
			if len(e.Fields) == 0 || len(e.Fields)%2 != 0 {
				return fmt.Errorf("key %q: stream entry %s has %d fields and values", r.Key, e.ID, len(e.Fields))
			}
			args := []any{"XADD", r.Key, e.ID}
			for _, f := range e.Fields {
				args = append(args, f)
			}
			do(r.Key, args...)
		}
	default:
		return fmt.Errorf("key %q: unknown type %q", r.Key, r.Type)
	}
	return nil
}
