package resp

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// The differential fuzzer: random sequences of commands sent in lockstep
// to our server and to a real redis-server, raw replies compared (after
// the rules of replyRules), each sequence ending with a comparison of
// every key's type, contents and TTL, and a PING of a fresh connection.
//
// Environment:
//
//	DIFFFUZZ_TIME       how long to run (a Go duration; default 1m, 5s with -short)
//	DIFFFUZZ_SEED       the base seed (default: drawn, and printed on failure;
//	                    under CI=true the fixed ciFuzzSeed, so that a landing
//	                    never depends on a newly drawn sequence: the long runs
//	                    of make fuzz-resp draw theirs)
//	DIFFFUZZ_SEQ        replay only this sequence of the seed
//	DIFFFUZZ_KEEPGOING  1: record every difference and go on (make fuzz-resp)
//
// A difference fails the test with its shrunk sequence, ready to paste
// into diffFuzzRegressions.

// fuzzWait bounds the wait for one reply: beyond it our server is stuck.
const fuzzWait = 10 * time.Second

// fuzzDiff is one difference: the sequence that shows it (its last
// command, or the state check after it when atEnd), and the two replies.
type fuzzDiff struct {
	seq       [][]string
	args      []string
	want, got string
	atEnd     bool
	// at is the index in seq of the command that differed.
	at int
}

func (d *fuzzDiff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  redis: %s\n  ours:  %s\n  sequence:\n%s", quoteArgs(d.args), d.want, d.got, goSequence(d.seq))
	if d.atEnd {
		b.WriteString("  (found by the state check after the sequence)\n")
	}
	return b.String()
}

// signature groups differences for the summary: the command and the
// kinds of the two replies.
func (d *fuzzDiff) signature() string {
	k := func(s string) string {
		if s == "" {
			return "?"
		}
		if s[0] == '-' {
			code, _, _ := strings.Cut(s, " ")
			return code
		}
		return s[:1]
	}
	return strings.ToLower(d.args[0]) + " " + k(d.want) + "/" + k(d.got)
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, " ")
}

// goSequence writes seq as a Go literal for diffFuzzRegressions.
func goSequence(seq [][]string) string {
	var b strings.Builder
	for _, args := range seq {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, "\t\t{%s},\n", strings.Join(q, ", "))
	}
	return b.String()
}

// fuzzServers are the two servers' addresses and the counters of a run.
type fuzzServers struct {
	ours, ref string
	commands  int
}

// run plays seq on fresh connections (RESP proto) over two flushed
// keyspaces, and returns the first difference, or nil.
func (s *fuzzServers) run(seq [][]string, proto int) (*fuzzDiff, error) {
	ours, err := dialFuzz(s.ours)
	if err != nil {
		return nil, err
	}
	defer ours.Close()
	ref, err := dialFuzz(s.ref)
	if err != nil {
		return nil, err
	}
	defer ref.Close()
	both := func(args []string) (want, got wireReply, oursErr error, err error) {
		s.commands++
		if err := ref.send(args); err != nil {
			return want, got, nil, err
		}
		if oursErr = ours.send(args); oursErr == nil {
			got, oursErr = ours.recv(fuzzWait)
		}
		want, err = ref.recv(fuzzWait)
		return want, got, oursErr, err
	}
	for _, setup := range [][]string{{"FLUSHALL"}, {"HELLO", strconv.Itoa(proto)}} {
		if _, _, oerr, err := both(setup); err != nil || oerr != nil {
			return nil, fmt.Errorf("setup %v: redis %v, ours %v", setup, err, oerr)
		}
	}
	var queued [][]string
	inTx := false
	// stop: a rule accepted a difference after which the keyspaces may
	// differ; the sequence ends there.
	stop := false
	compare := func(args []string, atEnd bool) (*fuzzDiff, error) {
		want, got, oerr, err := both(args)
		if err != nil {
			return nil, fmt.Errorf("redis-server, %v: %w", args, err)
		}
		d := &fuzzDiff{seq: seq, args: args, want: want.String(), got: got.String(), atEnd: atEnd}
		if oerr != nil {
			d.got = "no reply: " + oerr.Error()
			return d, nil
		}
		name := strings.ToLower(args[0])
		switch {
		case inTx && want.kind == '+' && want.text == "QUEUED":
			queued = append(queued, args)
		case name == "multi" && want.kind == '+':
			inTx, queued = true, nil
		case name == "discard" && want.kind == '+':
			inTx = false
		case name == "exec" && inTx:
			inTx = false
			// Each of EXEC's replies by its own command's rules.
			if len(want.elems) == len(queued) && len(got.elems) == len(queued) && !want.null {
				for i, q := range queued {
					same, ends := sameRawReply(q, want.elems[i], got.elems[i])
					if same && ends {
						stop = true
						return nil, nil
					}
					if !same {
						d.args = q
						d.want, d.got = "EXEC[...] "+want.elems[i].String(), "EXEC[...] "+got.elems[i].String()
						return d, nil
					}
				}
				return nil, nil
			}
		}
		same, ends := sameRawReply(args, want, got)
		stop = stop || ends
		if !same {
			return d, nil
		}
		return nil, nil
	}
	for i, args := range seq {
		if d, err := compare(args, false); d != nil || err != nil {
			if d != nil {
				d.at, d.seq = i, seq[:i+1]
			}
			return d, err
		}
		if stop {
			return nil, nil
		}
	}
	// The state: every key's type, contents and TTL.
	end := [][]string{}
	if inTx {
		end = append(end, []string{"DISCARD"})
	}
	end = append(end, []string{"UNWATCH"}, []string{"KEYS", "*"})
	for _, k := range fuzzKeys {
		end = append(end, []string{"TYPE", k})
	}
	for _, args := range end {
		if d, err := compare(args, true); d != nil || err != nil {
			return d, err
		}
	}
	for _, k := range fuzzKeys {
		if err := ref.send([]string{"TYPE", k}); err != nil {
			return nil, err
		}
		typ, err := ref.recv(fuzzWait)
		if err != nil {
			return nil, err
		}
		var read []string
		switch typ.text {
		case "string":
			read = []string{"GET", k}
		case "hash":
			read = []string{"HGETALL", k}
		case "set":
			read = []string{"SMEMBERS", k}
		case "zset":
			read = []string{"ZRANGE", k, "0", "-1", "WITHSCORES"}
		case "list":
			read = []string{"LRANGE", k, "0", "-1"}
		default:
			continue
		}
		for _, args := range [][]string{read, {"TTL", k}} {
			if d, err := compare(args, true); d != nil || err != nil {
				return d, err
			}
		}
	}
	// Still alive: a fresh connection gets PONG.
	ping, err := dialFuzz(s.ours)
	if err != nil {
		return &fuzzDiff{seq: seq, args: []string{"PING"}, want: "+\"PONG\"", got: "no connection: " + err.Error(), atEnd: true}, nil
	}
	defer ping.Close()
	if err := ping.send([]string{"PING"}); err != nil {
		return &fuzzDiff{seq: seq, args: []string{"PING"}, want: "+\"PONG\"", got: err.Error(), atEnd: true}, nil
	}
	if r, err := ping.recv(fuzzWait); err != nil || r.String() != `+"PONG"` {
		return &fuzzDiff{seq: seq, args: []string{"PING"}, want: "+\"PONG\"", got: fmt.Sprint(r, err), atEnd: true}, nil
	}
	return nil, nil
}

// shrink removes commands from d's sequence while a difference in the
// same command remains, and returns the smallest difference found.
func (s *fuzzServers) shrink(d *fuzzDiff, proto int) *fuzzDiff {
	name := strings.ToLower(d.args[0])
	seq := d.seq
	for i := len(seq) - 1; i >= 0; i-- {
		if len(seq) == 1 {
			break
		}
		try := append(append([][]string{}, seq[:i]...), seq[i+1:]...)
		if nd, err := s.run(try, proto); err == nil && nd != nil && strings.EqualFold(nd.args[0], name) && nd.atEnd == d.atEnd {
			seq, d = try, nd
		}
	}
	return d
}

// fuzzSettings reads the environment.
type fuzzSettings struct {
	budget    time.Duration
	seed      uint64
	onlySeq   int
	keepGoing bool
}

// ciFuzzSeed is the seed of the CI's bounded run.
const ciFuzzSeed = 1

func readFuzzSettings(t *testing.T) fuzzSettings {
	st := fuzzSettings{budget: time.Minute, seed: rand.Uint64() >> 1, onlySeq: -1}
	if os.Getenv("CI") == "true" {
		st.seed = ciFuzzSeed
	}
	if testing.Short() {
		st.budget = 5 * time.Second
	}
	if v := os.Getenv("DIFFFUZZ_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "DIFFFUZZ_TIME")
		st.budget = d
	}
	if v := os.Getenv("DIFFFUZZ_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "DIFFFUZZ_SEED")
		st.seed = n
	}
	if v := os.Getenv("DIFFFUZZ_SEQ"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "DIFFFUZZ_SEQ")
		st.onlySeq = n
	}
	st.keepGoing = os.Getenv("DIFFFUZZ_KEEPGOING") == "1"
	return st
}

// fuzzSequence draws sequence i of a seed, and the protocol it speaks.
func fuzzSequence(seed uint64, i int) ([][]string, int) {
	g := &fuzzGen{rng: rand.New(rand.NewPCG(seed, uint64(i)))}
	proto := 2
	if g.chance(3) {
		proto = 3
	}
	return g.sequence(), proto
}

// fuzzSummary is the run's final JSON line.
type fuzzSummary struct {
	Seed           uint64         `json:"seed"`
	Seconds        float64        `json:"seconds"`
	Sequences      int            `json:"sequences"`
	Commands       int            `json:"commands"`
	CommandsPerSec float64        `json:"commands_per_sec"`
	Differences    int            `json:"differences"`
	Kinds          map[string]int `json:"kinds"`
}

// Random sequences give redis-server's replies and leave the keys as
// redis-server leaves them. See the environment above.
func TestDiffFuzz(t *testing.T) {
	st := readFuzzSettings(t)
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	s := &fuzzServers{ours: addr, ref: ref.Options().Addr}
	sum := fuzzSummary{Seed: st.seed, Kinds: map[string]int{}}
	begin := time.Now()
	lastReport := begin
	report := func() {
		el := time.Since(begin)
		sum.Seconds = el.Seconds()
		sum.CommandsPerSec = float64(s.commands) / max(el.Seconds(), 1e-9)
		sum.Commands = s.commands
	}
	if st.keepGoing {
		fmt.Printf("difffuzz: seed %d, for %v\n", st.seed, st.budget)
	}
	for i := 0; ; i++ {
		if st.onlySeq >= 0 && i != st.onlySeq {
			if i > st.onlySeq {
				break
			}
			continue
		}
		if st.onlySeq < 0 && time.Since(begin) > st.budget {
			break
		}
		seq, proto := fuzzSequence(st.seed, i)
		sum.Sequences++
		d, err := s.run(seq, proto)
		require.NoError(t, err, "DIFFFUZZ_SEED=%d DIFFFUZZ_SEQ=%d", st.seed, i)
		if d != nil {
			d = s.shrink(d, proto)
			sum.Differences++
			sig := d.signature()
			sum.Kinds[sig]++
			msg := fmt.Sprintf("difference (replay: DIFFFUZZ_SEED=%d DIFFFUZZ_SEQ=%d, RESP%d): %s", st.seed, i, proto, d)
			if !st.keepGoing {
				t.Fatal(msg)
			}
			if sum.Kinds[sig] == 1 {
				fmt.Println(msg)
			}
		}
		if st.keepGoing && time.Since(lastReport) > 10*time.Second {
			lastReport = time.Now()
			report()
			fmt.Printf("difffuzz: %3.0fs: %d sequences, %d commands (%.0f/s), %d differences (%d kinds)\n",
				sum.Seconds, sum.Sequences, sum.Commands, sum.CommandsPerSec, sum.Differences, len(sum.Kinds))
		}
	}
	report()
	line, err := json.Marshal(sum)
	require.NoError(t, err)
	t.Logf("%s", line)
	if st.keepGoing {
		fmt.Printf("difffuzz: %d sequences, %d commands in %.0fs (%.0f commands/s), %d differences\n",
			sum.Sequences, sum.Commands, sum.Seconds, sum.CommandsPerSec, sum.Differences)
		for k, n := range sum.Kinds {
			fmt.Printf("difffuzz:   %-40s %d\n", k, n)
		}
		fmt.Println(string(line))
		require.Zero(t, sum.Differences, "differences found; see above")
	}
}

// diffFuzzRegressions are sequences the fuzzer found differing, each
// named for the behaviour it checks, replayed against both servers.
var diffFuzzRegressions = []struct {
	name string
	seq  [][]string
}{
	{"relative expiries beyond 292 years", [][]string{
		{"SET", "{t}a", "v", "EX", "922337203685477"}, {"TTL", "{t}a"},
		{"SETEX", "{t}b", "922337203685477", "v"}, {"PSETEX", "{t}c", "9223372036854776", "v"},
		{"PEXPIRE", "{t}a", "9223372036854776"}, {"PTTL", "{t}a"}, {"GETEX", "{t}c", "PX", "9223372036854776"},
		{"EXPIRE", "{t}b", "9223372036854775"}, {"SET", "{t}d", "v", "PX", "9223372036854775807"},
		{"EXPIRE", "{t}b", "-922337203685477"}, {"EXISTS", "{t}b"},
	}},
	{"LREM with the count -2^63", [][]string{
		{"RPUSH", "{t}d", "a", "b", "a", "a"}, {"LREM", "{t}d", "-9223372036854775808", "a"},
		{"LRANGE", "{t}d", "0", "-1"}, {"RPUSH", "{t}d", "a"}, {"LREM", "{t}d", "9223372036854775807", "a"},
		{"LLEN", "{t}d"},
	}},
	{"score bounds read as strtod reads them", [][]string{
		{"ZADD", "{t}a", "1", "a", "16", "b"},
		{"ZCOUNT", "{t}a", "(", "+inf"}, {"ZCOUNT", "{t}a", "", "+inf"}, {"ZCOUNT", "{t}a", " 1", "+inf"},
		{"ZCOUNT", "{t}a", "1 ", "+inf"}, {"ZCOUNT", "{t}a", "0x10", "+inf"}, {"ZCOUNT", "{t}a", "-1e400", "(1e400"},
		{"ZCOUNT", "{t}a", " ", "+inf"}, {"ZCOUNT", "{t}a", "( 1", "+inf"}, {"ZCOUNT", "{t}a", ".5", "5."},
		{"ZCOUNT", "{t}a", "0x", "+inf"}, {"ZCOUNT", "{t}a", "1_0", "+inf"},
		{"ZRANGEBYSCORE", "{t}a", "", "(1e400", "WITHSCORES"}, {"ZRANGE", "{t}a", "(", "+inf", "BYSCORE"},
		{"ZRANGESTORE", "{t}b", "{t}a", "", "(-inf", "BYSCORE", "REV"},
		{"ZREMRANGEBYSCORE", "{t}a", "(", "("}, {"ZREMRANGEBYSCORE", "{t}a", "", "1"},
	}},
	{"an empty BITPOS or BITCOUNT bound or unit is read, not taken as absent", [][]string{
		{"DECRBY", "{t}d", "-4"}, {"MULTI"}, {"BITPOS", "{t}d", "0", "1", "", "BIT"}, {"EXEC"},
		{"BITPOS", "{t}d", "1", ""}, {"BITPOS", "{t}d", "1", "0", ""}, {"BITPOS", "{t}d", "1", "0", "1", ""},
		{"BITCOUNT", "{t}d", "", "1"}, {"BITCOUNT", "{t}d", "0", ""}, {"BITCOUNT", "{t}d", "0", "1", ""},
		{"BITPOS", "{t}none", "0", "1", ""}, {"BITCOUNT", "{t}none", "", ""},
	}},
	{"an LTRIM that keeps every element touches a WATCHed key", [][]string{
		{"LPUSH", "{t}\x00\r\n\xff", "-3", "b"}, {"WATCH", "{t}\x00\r\n\xff", "{t}\x00\r\n\xff"},
		{"LTRIM", "{t}\x00\r\n\xff", "-5", "3"}, {"MULTI"}, {"EXEC"},
		{"WATCH", "{t}a"}, {"LTRIM", "{t}a", "0", "-1"}, {"MULTI"}, {"EXEC"},
	}},
	{"UNWATCH is queued inside MULTI", [][]string{
		{"WATCH", "{t}a"}, {"MULTI"}, {"UNWATCH"}, {"SET", "{t}a", "1"}, {"EXEC"}, {"GET", "{t}a"},
	}},
	{"MPOP counts up to 2^63-1, numkeys and count read before the timeout", [][]string{
		{"RPUSH", "{t}a", "1", "2", "3"}, {"ZADD", "{t}b", "1", "a", "2", "b"},
		{"LMPOP", "2", "{t}c", "{t}a", "LEFT", "COUNT", "2147483648"},
		{"ZMPOP", "1", "{t}b", "MIN", "COUNT", "9223372036854775807"},
		{"BLMPOP", "0.01", "1", "{t}a", "RIGHT", "COUNT", "9223372036854775807"},
		{"LMPOP", "x", "{t}a", "LEFT"}, {"ZMPOP", "x", "{t}a", "MIN"}, {"LMPOP", "2147483648", "{t}a", "LEFT"},
		{"BLMPOP", "-1", "2", "{t}d", "{t}a", "LEFT", "COUNT", "-5"}, {"BZMPOP", "x", "1", "{t}a", "MAX", "COUNT", "0"},
		{"BZMPOP", "x", "1", "{t}a", "MAX"}, {"BLMPOP", "0.01", "x", "{t}a", "LEFT"},
	}},
	{"counts of pops and random reads: Redis's ranges and errors", [][]string{
		{"SADD", "{t}a", "x", "y"}, {"HSET", "{t}b", "f", "v"}, {"ZADD", "{t}c", "1", "m"}, {"RPUSH", "{t}d", "1"},
		{"SRANDMEMBER", "{t}a", "-9223372036854775808"}, {"HRANDFIELD", "{t}b", "-9223372036854775808"},
		{"ZRANDMEMBER", "{t}c", "-9223372036854775808", "WITHSCORES"}, {"SRANDMEMBER", "{t}a", "9223372036854775807"},
		{"HRANDFIELD", "{t}b", "9223372036854775807"}, {"ZRANDMEMBER", "{t}c", "9223372036854775807"},
		{"HRANDFIELD", "{t}b", "4611686018427387904", "WITHVALUES"}, {"HRANDFIELD", "{t}b", "4611686018427387903", "WITHVALUES"},
		{"ZRANDMEMBER", "{t}c", "-4611686018427387904", "WITHSCORES"}, {"SRANDMEMBER", "{t}a", "x"},
		{"SPOP", "{t}a", "x"}, {"LPOP", "{t}d", "1.5"}, {"RPOP", "{t}d", "-1"}, {"ZPOPMIN", "{t}c", "x"}, {"ZPOPMAX", "{t}c", "-1"},
		{"SPOP", "{t}a", "9223372036854775807"}, {"ZPOPMAX", "{t}c", "9223372036854775807"},
	}},
	{"BLMOVE and BRPOPLPUSH time out with a null array, inside MULTI a null string", [][]string{
		{"BLMOVE", "{t}a", "{t}b", "LEFT", "RIGHT", "0.01"}, {"BRPOPLPUSH", "{t}a", "{t}b", "0.01"},
		{"MULTI"}, {"BLMOVE", "{t}a", "{t}b", "LEFT", "RIGHT", "0.01"}, {"BRPOPLPUSH", "{t}a", "{t}b", "0.01"}, {"EXEC"},
	}},
	{"an unknown command's arguments are quoted as Redis quotes them", [][]string{
		{"NOSUCHCOMMAND", "{t}\x00\r\n\xff"}, {"NOSUCH\x00X", "a"},
		{"NOSUCHCOMMAND", "a", "b", "c", "d", "e"}, {"NOSUCHCOMMAND", strings.Repeat("x", 200), "b"},
		{"NOSUCHCOMMAND", strings.Repeat("x", 100), strings.Repeat("y", 100), "c"}, {strings.Repeat("N", 200)},
		{"MULTI"}, {"NOSUCHCOMMAND", "a\r\nb"}, {"EXEC"},
	}},
	{"LPOS COUNT and MAXLEN that are not integers", [][]string{
		{"RPUSH", "{t}a", "b"}, {"LPOS", "{t}a", "b", "MAXLEN", "2", "MAXLEN", "x"}, {"LPOS", "{t}a", "b", "COUNT", "x"},
		{"LPOS", "{t}a", "b", "COUNT", "1.5"}, {"LPOS", "{t}a", "b", "RANK", "x"}, {"LPOS", "{t}b", "b", "MAXLEN", "x"},
		{"LPOS", "{t}a", "b", "NOPE", "x"},
	}},
	{"SINTERCARD's and ZINTERCARD's numkeys errors", [][]string{
		{"ZINTERCARD", "0", "{t}a"}, {"ZINTERCARD", "-1", "{t}a"}, {"ZINTERCARD", "x", "{t}a"}, {"ZINTERCARD", "2147483648", "{t}a"},
		{"ZINTERCARD", "2", "{t}a", "LIMIT"}, {"ZINTERCARD", "1", "{t}a", "LIMIT", "x"},
		{"SINTERCARD", "0", "{t}a"}, {"SINTERCARD", "x", "{t}a"}, {"SINTERCARD", "5", "{t}a"}, {"SINTERCARD", "1", "{t}a", "LIMIT", "x"},
	}},
	{"LINDEX and LSET look the key up before reading the index", [][]string{
		{"LINDEX", "{t}a", "01"}, {"LINDEX", "{t}a", "1 "}, {"LSET", "{t}a", "1.5", "v"}, {"SET", "{t}b", "v"},
		{"LINDEX", "{t}b", "x"}, {"LSET", "{t}b", "x", "v"}, {"RPUSH", "{t}c", "v"}, {"LINDEX", "{t}c", "x"}, {"LSET", "{t}c", "x", "v"},
		{"MULTI"}, {"LINDEX", "{t}a", "x"}, {"LSET", "{t}c", "x", "v"}, {"EXEC"},
	}},
	{"scan cursors read as strtoul reads them; a collection scan looks the key up before its options", [][]string{
		{"SCAN", "-1"}, {"SCAN", "18446744073709551615"}, {"SCAN", "18446744073709551616"}, {"SCAN", " 5"}, {"SCAN", "+0"},
		{"SCAN", "-"}, {"SCAN", "-1", "MATCH"}, {"SCAN", "0x1"}, {"HSCAN", "{t}a", "-1"}, {"SSCAN", "{t}a", "x"},
		{"ZSCAN", "{t}a", "0", "TYPE", "MATCH", "?"}, {"HSCAN", "{t}a", "0", "COUNT", "0"}, {"SET", "{t}b", "v"},
		{"HSCAN", "{t}b", "0", "NOPE"}, {"SSCAN", "{t}b", "x"}, {"HSET", "{t}c", "f", "v"}, {"HSCAN", "{t}c", "0", "NOPE"},
		{"HSCAN", "{t}c", "0", "COUNT", "x"}, {"HSCAN", "{t}c", "-5"},
	}},
	{"BITPOS reads its unit before its end, BITCOUNT after", [][]string{
		{"APPEND", "{t}d", "x"}, {"BITPOS", "{t}d", "1", "-3", " 1", "WORD"}, {"BITPOS", "{t}d", "1", "x", "1", "WORD"},
		{"BITPOS", "{t}d", "1", "0", "x", "BIT"}, {"BITCOUNT", "{t}d", "0", " 1", "WORD"}, {"BITCOUNT", "{t}d", "0", "1", "WORD"},
		{"BITPOS", "{t}a", "1", "0", "x", "WORD"},
	}},
	{"a stored value past a float64 is a long double to INCRBYFLOAT, an infinite increment refused for the sum", [][]string{
		{"SET", "{t}a", "-42949672961e308"}, {"INCRBYFLOAT", "{t}a", "+inf"}, {"INCRBYFLOAT", "{t}a", "1"},
		{"SET", "{t}b", "1e5000"}, {"INCRBYFLOAT", "{t}b", "inf"}, {"INCRBYFLOAT", "{t}b", "1"},
		{"SET", "{t}c", "1e-5000"}, {"INCRBYFLOAT", "{t}c", "1"}, {"SET", "{t}d", "1"}, {"INCRBYFLOAT", "{t}d", "1e400"},
		{"INCRBYFLOAT", "{t}d", "-1e400"}, {"INCRBYFLOAT", "{t}d", "1e5000"}, {"INCRBYFLOAT", "{t}d", "1e-4940"},
	}},
	{"INCRBYFLOAT checks the type and the value before the increment; HINCRBYFLOAT refuses an infinite one", [][]string{
		{"HSET", "{t}a", "f", "1"}, {"INCRBYFLOAT", "{t}a", "1 "}, {"INCRBYFLOAT", "{t}a", "inf"}, {"SET", "{t}b", "x"},
		{"INCRBYFLOAT", "{t}b", "infinity"}, {"INCRBYFLOAT", "{t}b", "y"}, {"SET", "{t}c", "1"}, {"INCRBYFLOAT", "{t}c", "infinity"},
		{"INCRBYFLOAT", "{t}c", "-inf"}, {"INCRBYFLOAT", "{t}c", "nan"}, {"INCRBYFLOAT", "{t}d", "inf"}, {"INCRBYFLOAT", "{t}d", "x"},
		{"HINCRBYFLOAT", "{t}a", "f", "infinity"}, {"HINCRBYFLOAT", "{t}a", "f", "-inf"}, {"HINCRBYFLOAT", "{t}b", "f", "inf"},
		{"HINCRBYFLOAT", "{t}a", "f", "x"},
	}},
	{"ZRANGE's checks in Redis's order, with its texts", [][]string{
		{"ZADD", "{t}a", "1", "a", "2", "b", "3", "c"}, {"SET", "{t}s", "x"},
		{"ZRANGE", "{t}a", "0", "1", "LIMIT", "3", "-1"}, {"ZRANGE", "{t}a", "-2", "-4", "rev", "LIMIT", "3", "-1"},
		{"ZRANGE", "{t}a", "0", "1", "LIMIT", "0", "1"}, {"ZRANGE", "{t}s", "1", "1", "LIMIT", "-9223372036854775808", "3", "WITHSCORES"},
		{"ZREVRANGE", "{t}s", "5", "3", "WITHSCORES", "LIMIT", "2147483648", "3"}, {"ZREVRANGE", "{t}a", "18446744073709551616", "4", "LIMIT", "3", "1"},
		{"ZRANGESTORE", "{t}d", "{t}a", "1", "01", "LIMIT", "2", "1"}, {"ZRANGESTORE", "{t}d", "{t}a", "0", "1", "WITHSCORES", "LIMIT", "x"},
		{"ZRANGE", "{t}a", "a", "[", "BYLEX", "WITHSCORES"}, {"ZRANGEBYLEX", "{t}a", "[a", "(a", "WITHSCORES"},
		{"ZREVRANGEBYLEX", "{t}a", "+", "[a", "WITHSCORES", "LIMIT", "-5", "0"}, {"ZRANGESTORE", "{t}d", "{t}a", "0", "-1", "LIMIT", "0", "-1"},
	}},
	{"a SETBIT that changes no bit leaves a WATCH holding", [][]string{
		{"INCR", "{t}c"}, {"WATCH", "{t}c"}, {"SETBIT", "{t}c", "7", "1"}, {"SETBIT", "{t}c", "0", "0"},
		{"MULTI"}, {"RPUSH", "{t}a", "10", "c"}, {"EXEC"},
		{"WATCH", "{t}c"}, {"SETBIT", "{t}c", "6", "1"}, {"MULTI"}, {"RPUSH", "{t}a", "d"}, {"EXEC"},
		{"WATCH", "{t}c"}, {"SETBIT", "{t}c", "9", "0"}, {"MULTI"}, {"RPUSH", "{t}a", "d"}, {"EXEC"}, {"GET", "{t}c"},
	}},
	{"INCRBYFLOAT and HINCRBYFLOAT over a stored inf", [][]string{
		{"MSETNX", "{t}a", "inf", "{t}b", "-Infinity", "{t}c", "+-inf"}, {"INCRBYFLOAT", "{t}a", "3"}, {"INCRBYFLOAT", "{t}b", "x"},
		{"INCRBYFLOAT", "{t}c", "1"}, {"HSET", "{t}d", "f", "INF"}, {"HINCRBYFLOAT", "{t}d", "f", "1"}, {"GET", "{t}a"},
	}},
	{"a WATCHed key the watching client creates and deletes again fails EXEC", [][]string{
		{"WATCH", "{t}a", "{t}d"}, {"HSETNX", "{t}a", "b", "2.5"}, {"DEL", "{t}c", "{t}a", "{t}c"}, {"MULTI"}, {"EXEC"},
		{"WATCH", "{t}a"}, {"DEL", "{t}a"}, {"SREM", "{t}a", "x"}, {"MULTI"}, {"PING"}, {"EXEC"},
		{"SET", "{t}b", "1"}, {"WATCH", "{t}b"}, {"INCRBY", "{t}b", "0"}, {"MULTI"}, {"GET", "{t}b"}, {"EXEC"},
		{"WATCH", "{t}b"}, {"HSET", "{t}b", "f", "v"}, {"MULTI"}, {"GET", "{t}b"}, {"EXEC"},
		{"WATCH", "{t}\x00\r\n\xff", "{t}b"}, {"SET", "{t}\x00\r\n\xff", "10", "PXAT", "1", "PXAT", "1000"}, {"MULTI"}, {"EXEC"},
		{"WATCH", "{t}c"}, {"SET", "{t}c", "10", "XX", "PXAT", "1000"}, {"MULTI"}, {"EXEC"},
		{"WATCH", "{t}c"}, {"SET", "{t}c", "10", "NX", "EXAT", "1"}, {"MULTI"}, {"EXEC"},
		{"WATCH", "{t}c"}, {"SET", "{t}c", "10", "EXAT", "x"}, {"MULTI"}, {"EXEC"},
	}},
}

func TestDiffFuzzRegressions(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	s := &fuzzServers{ours: addr, ref: ref.Options().Addr}
	for _, tc := range diffFuzzRegressions {
		t.Run(tc.name, func(t *testing.T) {
			for _, proto := range []int{2, 3} {
				d, err := s.run(tc.seq, proto)
				require.NoError(t, err)
				require.Nil(t, d, "RESP%d: %v", proto, d)
			}
		})
	}
}
