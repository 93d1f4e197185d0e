package contextbench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Config is a run's settings.
type Config struct {
	// Sizes are the corpus sizes in nodes (sessions), run smallest first.
	Sizes []int `json:"sizes"`
	// SessionsPerUser is each user's number of sessions: a size holds
	// size/SessionsPerUser users.
	SessionsPerUser int `json:"sessions_per_user"`
	// Queries is how many of the planted questions are asked at each size,
	// picked with the seed (0: all).
	Queries int `json:"queries"`
	// Repeats is how many times each system answers every query,
	// alternating.
	Repeats int `json:"repeats"`
	// Budget is max_prompt_tokens of every pack: prompt and context.
	Budget int `json:"budget"`
	// Embedded are the extra arms of ours with an embedder: "hash" (the
	// hash embedder) embeds every session, "half" every other one; "model"
	// embeds every session with the OpenAI-compatible server at EmbedURL.
	Embedded []string `json:"embedded"`
	// EmbedURL and EmbedModel are the "model" arm's embeddings server and
	// model (scripts/embed-server serves all-MiniLM-L6-v2).
	EmbedURL   string `json:"embed_url,omitempty"`
	EmbedModel string `json:"embed_model,omitempty"`
	// Seed makes the corpus.
	Seed uint64 `json:"seed"`
	// CPUProfile, if set, is where a CPU profile of the queries (not the
	// loading) is written; with several sizes, the last size's.
	CPUProfile string `json:"-"`
	// Out is the JSON report's path.
	Out string `json:"-"`
}

// DefaultConfig is the configuration when nothing is set: the issue's
// 10,000 and 100,000 nodes (a few minutes), or with quick a small corpus
// that runs in seconds.
func DefaultConfig(quick bool) Config {
	c := Config{Sizes: []int{10_000, 100_000}, SessionsPerUser: 100, Queries: 300, Repeats: 3, Budget: 1200, Seed: 1,
		EmbedModel: "all-MiniLM-L6-v2"}
	if quick {
		c.Sizes, c.Queries = []int{1_000}, 60
	}
	return c
}

// embeddedArms are the names Embedded takes.
var embeddedArms = []string{"hash", "half", "model"}

func (c Config) validate() error {
	switch {
	case len(c.Sizes) == 0:
		return fmt.Errorf("no sizes")
	case c.SessionsPerUser < MinSessionsPerUser:
		return fmt.Errorf("sessions per user %d: at least %d", c.SessionsPerUser, MinSessionsPerUser)
	case c.Repeats < 1:
		return fmt.Errorf("repeats %d: at least 1", c.Repeats)
	case c.Budget < 1:
		return fmt.Errorf("budget %d: at least 1", c.Budget)
	case c.Queries < 0:
		return fmt.Errorf("queries %d: not negative", c.Queries)
	}
	for _, s := range c.Sizes {
		if s < c.SessionsPerUser {
			return fmt.Errorf("size %d: smaller than one user's %d sessions", s, c.SessionsPerUser)
		}
	}
	for _, a := range c.Embedded {
		if !slices.Contains(embeddedArms, a) {
			return fmt.Errorf("unknown embedded arm %q (want %s)", a, strings.Join(embeddedArms, ", "))
		}
		if a == "model" && c.EmbedURL == "" {
			return fmt.Errorf("embedded arm model: no --embed-url (scripts/embed-server serves one)")
		}
	}
	return nil
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "small run: 1,000 nodes, 60 queries, 3 repeats (seconds)", nil),
	opt("sizes", "BENCH_SIZES", "list", "corpus sizes in nodes, one session a node (default 10000,100000; 100000 loads into memstore in about 25 seconds, a real model embeds about 4 nodes a second)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		slices.Sort(xs)
		c.Sizes = xs
		return err
	}),
	opt("sessions-per-user", "BENCH_SESSIONS_PER_USER", "n", "sessions of each user; users = size / this (default 100)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.SessionsPerUser = n
		return err
	}),
	opt("queries", "BENCH_QUERIES", "n", "planted questions asked at each size, picked by the seed; 0 asks all (default 300)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Queries = n
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "times each system answers every query, alternating (default 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	opt("budget", "BENCH_BUDGET", "n", "max_prompt_tokens of every pack, prompt included (default 1200)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Budget = n
		return err
	}),
	opt("embedded", "BENCH_EMBEDDED", "list", "extra arms of ours with an embedder: hash (the hash embedder, vectors without meaning, every session), half (every other session), model (a real model at --embed-url); default none", func(c *Config, v string) error {
		c.Embedded = benchkit.SplitList(v)
		return nil
	}),
	opt("embed-url", "BENCH_EMBED_URL", "url", "OpenAI-compatible embeddings server of the model arm, e.g. http://127.0.0.1:8090/v1 (scripts/embed-server)", func(c *Config, v string) error {
		c.EmbedURL = v
		return nil
	}),
	opt("embed-model", "BENCH_EMBED_MODEL", "name", "model the model arm asks for (default all-MiniLM-L6-v2)", func(c *Config, v string) error {
		c.EmbedModel = v
		return nil
	}),
	opt("seed", "BENCH_SEED", "n", "seed of the synthetic corpus (default 1)", func(c *Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		c.Seed = n
		return err
	}),
	opt("cpuprofile", "BENCH_CPUPROFILE", "path", "write a pprof CPU profile of the queries (loading left out; the last size's) to path", func(c *Config, v string) error {
		c.CPUProfile = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/context.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench context`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench context" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench context
  BENCH_QUICK=1 go run ./bench context
  go run ./bench context --sizes 10000 --embedded hash,half
`)
}

// Command runs `bench context` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "context", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
