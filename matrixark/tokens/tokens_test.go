package tokens_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

func TestO200kGoldens(t *testing.T) {
	c := tokens.O200k()
	require.Equal(t, "o200k_base", c.Name())
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"hello world", 2},
		{"Prefer compact int8 embeddings.", 6},
		{"", 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			require.Equal(t, tc.want, c.Count(tc.in))
		})
	}
}

func TestSpecialTokensAreOrdinaryText(t *testing.T) {
	// Encode would panic here; the ordinary encoder spells the marker out
	// as several plain tokens instead of the single special token.
	c := tokens.O200k()
	require.NotPanics(t, func() { c.Count("before <|endoftext|> after") })
	require.Greater(t, c.Count("<|endoftext|>"), 1)
}

func TestEncodingsAreSharedAndDistinct(t *testing.T) {
	a, b := tokens.O200k(), tokens.O200k()
	require.Same(t, a, b, "an encoding is built once per process")

	cl := tokens.Cl100k()
	require.Equal(t, "cl100k_base", cl.Name())
	require.Equal(t, 2, cl.Count("hello world"))

	byName, err := tokens.Encoding(tokens.O200kBase)
	require.NoError(t, err)
	require.Same(t, a, byName)
}

func TestUnknownEncoding(t *testing.T) {
	for _, name := range []string{"", "gpt2", "O200K_BASE", "o200k"} {
		t.Run(name, func(t *testing.T) {
			c, err := tokens.Encoding(name)
			require.ErrorIs(t, err, tokens.ErrUnknownEncoding)
			require.Nil(t, c)
		})
	}
}

func TestConcurrentCount(t *testing.T) {
	c := tokens.O200k()
	want := c.Count("Prefer compact int8 embeddings.")
	var wg sync.WaitGroup
	errs := make(chan int, 64)
	for range 8 {
		wg.Go(func() {
			for range 8 {
				if got := c.Count("Prefer compact int8 embeddings."); got != want {
					errs <- got
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		require.Equal(t, want, got)
	}
}

func TestWords(t *testing.T) {
	w := tokens.Words{}
	require.Equal(t, "words", w.Name())
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 1},
		{"   \n\t ", 1},
		{"one", 1},
		{"hello world", 2},
		{"Prefer compact int8 embeddings.", 4},
		{"  leading and trailing  ", 3},
		{"tabs\tand\nnewlines\r\nmixed", 4},
		{"no\u00a0break\u2003em space", 4}, // Unicode spaces separate words
		{"[L0] tsctx://tenant/t/node/1 doc-1\ntext\n", 4},
	} {
		t.Run(tc.in, func(t *testing.T) {
			require.Equal(t, tc.want, w.Count(tc.in))
		})
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{
		"", "hello world", "Prefer compact int8 embeddings.", "<|endoftext|>",
		"<|fim_prefix|>x<|fim_suffix|>", "\xff\xfe\xfd", "a\x00b", strings.Repeat(" ", 40),
		"日本語のテキスト 123", "'s 've 're\r\n\r\n",
	} {
		f.Add(s)
	}
	c := tokens.O200k()
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, max(len(strings.Fields(s)), 1), tokens.Words{}.Count(s))
		// BPE merging is quadratic in the length of one regex piece (a long
		// run of one letter or of spaces); longer inputs only slow the
		// search down without reaching new code.
		if len(s) > 1024 {
			return
		}
		n := c.Count(s)
		if s == "" {
			require.Zero(t, n)
		} else {
			require.Positive(t, n)
			// A token covers at least one byte of valid UTF-8 input.
			if utf8.ValidString(s) {
				require.LessOrEqual(t, n, len(s))
			}
		}
	})
}

func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("Customer checkout failed after the payment provider changed its risk score; "+
		"the incident was moved to the fraud review queue on 2024-05-01. ", 8)
	for _, tc := range []struct {
		name string
		c    tokens.Counter
	}{
		{"o200k", tokens.O200k()},
		{"words", tokens.Words{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			n := 0
			for b.Loop() {
				n = tc.c.Count(text)
			}
			b.ReportMetric(float64(n), "tokens")
		})
	}
}

// counting is a Counter that counts its calls.
type counting struct {
	calls int
	tokens.Words
}

func (c *counting) Count(s string) int {
	c.calls++
	return c.Words.Count(s)
}

// A cache answers as its counter does, counts a text once while it stays,
// and keeps no more than its bound of texts.
func TestCache(t *testing.T) {
	inner := &counting{}
	c := tokens.Cache(inner, 64)
	require.Equal(t, inner.Name(), c.Name())
	for range 3 {
		require.Equal(t, 3, c.Count("one two three"))
	}
	require.Equal(t, 1, inner.calls)
	// Fill past two generations (32 bytes each): the first text goes.
	for i := range 10 {
		require.Equal(t, 2, c.Count(fmt.Sprintf("filler %d", i)))
	}
	require.Equal(t, 3, c.Count("one two three"))
	require.Equal(t, 12, inner.calls)
	// A text past a generation is counted every time, never kept.
	big := strings.Repeat("w ", 40)
	require.Equal(t, 40, c.Count(big))
	require.Equal(t, 40, c.Count(big))
	require.Equal(t, 14, inner.calls)
}
