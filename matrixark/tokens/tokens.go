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
	fast *o200k // o200k_base's own counter, in place of enc
}

// Count returns the number of BPE tokens in s. It uses EncodeOrdinary:
// Encode panics when s contains a special token such as "<|endoftext|>",
// and prompt text must never decide whether counting succeeds.
func (b *bpe) Count(s string) int {
	if s == "" {
		return 0
	}
	if b.fast != nil {
		return b.fast.count(s)
	}
	return len(b.enc.EncodeOrdinary(s))
}

// Name returns the encoding name, e.g. "o200k_base".
func (b *bpe) Name() string { return b.name }

// lazyBPE is the Counter of one encoding, built at most once, when first
// needed.
type lazyBPE struct {
	name string
	once sync.Once
	bpe  *bpe
	err  error
}

func (l *lazyBPE) build() (*bpe, error) {
	loaderOnce.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
	l.once.Do(func() {
		if l.name == O200kBase {
			// The ranks alone: o200k is counted by this package's own
			// splitter (o200k.go), so tiktoken's CoreBPE is never built.
			ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(O200kBase + ".tiktoken")
			if err != nil {
				l.err = fmt.Errorf("%w %s: %v", ErrEncoding, l.name, err)
				return
			}
			l.bpe = &bpe{name: l.name, fast: &o200k{ranks: ranks}}
			return
		}
		enc, err := tiktoken.GetEncoding(l.name)
		if err != nil {
			l.err = fmt.Errorf("%w %s: %v", ErrEncoding, l.name, err)
			return
		}
		l.bpe = &bpe{name: l.name, enc: enc}
	})
	return l.bpe, l.err
}

// Count builds the encoding on first use. It panics only if the vocabulary
// compiled into the binary cannot be built: a build defect, not a runtime
// condition (Encoding reports it as an error instead).
func (l *lazyBPE) Count(s string) int {
	b, err := l.build()
	if err != nil {
		panic(err)
	}
	return b.Count(s)
}

// Name returns the encoding name, e.g. "o200k_base".
func (l *lazyBPE) Name() string { return l.name }

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
		O200kBase:  {name: O200kBase},
		Cl100kBase: {name: Cl100kBase},
		P50kBase:   {name: P50kBase},
		P50kEdit:   {name: P50kEdit},
		R50kBase:   {name: R50kBase},
	}
)

// Encoding returns the Counter for the named byte-pair encoding, building it
// now (so a failure is an error here) and sharing it afterwards. Names other
// than the constants of this package fail with ErrUnknownEncoding.
func Encoding(name string) (Counter, error) {
	lazy, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEncoding, name)
	}
	if _, err := lazy.build(); err != nil {
		return nil, err
	}
	return lazy, nil
}

// O200k returns the o200k_base Counter (the GPT-4o family's encoding), the
// packer's default. The encoding is built at its first Count, not here, so
// a process that takes the default does not pay 0.2–0.9 s at start-up.
func O200k() Counter { return encodings[O200kBase] }

// Cl100k returns the cl100k_base Counter (the GPT-4 and GPT-3.5 family's
// encoding), built at its first Count as O200k's is.
func Cl100k() Counter { return encodings[Cl100kBase] }

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
