package tokens_test

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

// tiktokenO200k is tiktoken-go's own o200k_base, the reference.
var tiktokenO200k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	return tiktoken.GetEncoding(tokens.O200kBase)
})

// fragments are pieces of text that exercise every alternative of the
// pattern and the edges between them.
var fragments = []string{
	"hello", "Hello", "HELLO", "HeLLo", "world", "'s", "'S", "'re", "'RE", "'ve", "'ll", "'LL", "'d", "'m", "'t", "'x", "'",
	"don't", "I'M", "we'Re", "0", "12", "123", "1234", "1234567", "٣٤٥", "½", "Ⅻ",
	"é", "ß", "Ω", "ǅ", "ʰ", "中文", "ひらがな", "カタカナ", "한국어", "مرحبا", "क्षि", "e\u0301", "\u0301", "A\u0300B",
	"😀", "👍🏽", "!", "?!", "/", "//", "-", "—", "...", "$", "€5", "<|endoftext|>", "#", "@", "\\", "_", "__init__",
	" ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n ", "\r", "\u00a0", "\u2028", "\u3000", "\v", "\f", "\u0085",
	"\x00", "\x1b", "\xff", "\xc3", "\xe2\x82", "https://example.com/a/b", "a/b", "x\n/", "!\n/y", "1,000.50", "3.14",
	"CamelCaseWord", "snake_case", "UPPER_lower", "iPhone", "McDonald's", "O'Neil", "l'été",
}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(12) {
		b.WriteString(fragments[rng.IntN(len(fragments))])
		if rng.IntN(3) == 0 {
			b.WriteString(" ")
		}
	}
	return b.String()
}

// Our o200k_base counts what tiktoken-go's does, on every mix of the
// fragments tried and on the goldens.
func TestO200kMatchesTiktoken(t *testing.T) {
	ref, err := tiktokenO200k()
	require.NoError(t, err)
	c := tokens.O200k()
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 20000 {
		s := randomText(rng)
		require.Equal(t, len(ref.EncodeOrdinary(s)), c.Count(s), "case %d: %q", i, s)
	}
	long := strings.Repeat("The quick brown fox's 12345 jumps!\n\n  over  the lazy dog\r\n", 200)
	require.Equal(t, len(ref.EncodeOrdinary(long)), c.Count(long))
}

func FuzzO200kMatchesTiktoken(f *testing.F) {
	for _, s := range fragments {
		f.Add(s)
	}
	f.Add("Prefer compact int8 embeddings.")
	ref, err := tiktokenO200k()
	require.NoError(f, err)
	c := tokens.O200k()
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, len(ref.EncodeOrdinary(s)), c.Count(s), "%q", s)
	})
}

func BenchmarkO200k(b *testing.B) {
	text := strings.Repeat("Customer checkout failed after the deploy; payments were retried 3 times. ", 20)
	ref, err := tiktokenO200k()
	require.NoError(b, err)
	c := tokens.O200k()
	c.Count("warm")
	for _, tc := range []struct {
		name  string
		count func(string) int
	}{{"ours", c.Count}, {"tiktoken-go", func(s string) int { return len(ref.EncodeOrdinary(s)) }}} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n = tc.count(text)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
		})
	}
}
