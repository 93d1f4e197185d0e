package tokens

import (
	"errors"
	"fmt"
	"sync"
	"unicode"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts the tokens of a string. Implementations are safe for
// concurrent use.
type Counter interface {
	// Count returns the number of tokens in s.
	Count(s string) int
	// Name identifies the tokenizer, for audits (e.g. "o200k_base").
	Name() string
}

// Names of the byte-pair encodings the offline loader carries.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
	P50kBase   = "p50k_base"
	P50kEdit   = "p50k_edit"
	R50kBase   = "r50k_base"
)

// ErrUnknownEncoding reports an encoding name the offline loader does not
// carry.
var ErrUnknownEncoding = errors.New("tokens: unknown encoding")

// ErrEncoding reports an encoding that failed to build.
var ErrEncoding = errors.New("tokens: cannot build encoding")

// bpe is a Counter over one tiktoken encoding.
type bpe struct {
	name string
	enc  *tiktoken.Tiktoken
}

// Count returns the number of BPE tokens in s. It uses EncodeOrdinary:
// Encode panics when s contains a special token such as "<|endoftext|>",
// and prompt text must never decide whether counting succeeds.
func (b *bpe) Count(s string) int {
	if s == "" {
		return 0
	}
	return len(b.enc.EncodeOrdinary(s))
}

// Name returns the encoding name, e.g. "o200k_base".
func (b *bpe) Name() string { return b.name }

// lazyBPE builds one encoding at most once.
type lazyBPE struct {
	once sync.Once
	bpe  *bpe
	err  error
}

// The one process-wide state of this package, on purpose:
//
//   - loaderOnce guards tiktoken.SetBpeLoader, a global of the dependency
//     whose default loader downloads vocabularies over the network; it is
//     switched to the offline loader (vocabularies embedded in the binary)
//     before any encoding is built.
//   - encodings caches each built encoding: GetEncoding costs 0.2–0.9 s and
//     a ~200K-entry map, far too much to pay per Counter. The map itself is
//     never written after initialisation; each entry builds under its own
//     sync.Once, so two encodings can build concurrently.
var (
	loaderOnce sync.Once
	encodings  = map[string]*lazyBPE{
		O200kBase:  {},
		Cl100kBase: {},
		P50kBase:   {},
		P50kEdit:   {},
		R50kBase:   {},
	}
)

// Encoding returns the Counter for the named byte-pair encoding, building it
// on first use and sharing it afterwards. Names other than the constants of
// this package fail with ErrUnknownEncoding.
func Encoding(name string) (Counter, error) {
	lazy, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEncoding, name)
	}
	loaderOnce.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
	lazy.once.Do(func() {
		enc, err := tiktoken.GetEncoding(name)
		if err != nil {
			lazy.err = fmt.Errorf("%w %s: %v", ErrEncoding, name, err)
			return
		}
		lazy.bpe = &bpe{name: name, enc: enc}
	})
	if lazy.err != nil {
		return nil, lazy.err
	}
	return lazy.bpe, nil
}

// O200k returns the o200k_base Counter (the GPT-4o family's encoding), the
// packer's default. It panics only if the vocabulary compiled into the
// binary cannot be built, which is a build defect, not a runtime condition.
func O200k() Counter { return mustEncoding(O200kBase) }

// Cl100k returns the cl100k_base Counter (the GPT-4 and GPT-3.5 family's
// encoding). It panics under the same condition as O200k.
func Cl100k() Counter { return mustEncoding(Cl100kBase) }

func mustEncoding(name string) Counter {
	c, err := Encoding(name)
	if err != nil {
		panic(err)
	}
	return c
}

// Words counts whitespace-separated words, with a minimum of 1 so that even
// an empty block costs something. It is the estimator of the original
// system, kept for conformance; the zero value is ready to use.
type Words struct{}

// Count returns the number of whitespace-separated words in s, at least 1.
func (Words) Count(s string) int {
	// The same words strings.Fields finds, without allocating them.
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			inWord = false
		case !inWord:
			inWord = true
			n++
		}
	}
	return max(n, 1)
}

// Name returns "words".
func (Words) Name() string { return "words" }
