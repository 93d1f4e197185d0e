// Package tokens counts tokens the way the packer charges them.
//
// A Counter turns a string into a token count and names itself, so that an
// audit can record which tokenizer priced a pack:
//
//	c := tokens.O200k()              // o200k_base BPE, the default
//	n := c.Count("hello world")      // 2
//	name := c.Name()                 // "o200k_base"
//
// O200k and Cl100k are byte-pair encoders over tiktoken-go's vocabularies
// and its offline loader: the vocabularies are compiled into the binary and
// nothing is downloaded. O200k splits text with this package's own reading
// of o200k_base's pattern and merges over its ranks, about nine times
// faster than tiktoken-go's regexp2 split (BenchmarkO200k), with the same
// counts (TestO200kMatchesTiktoken, FuzzO200kMatchesTiktoken); the others
// are tiktoken-go's own. Loading an encoding takes up to a second and a map
// of about 200,000 entries, so each one is loaded once per process, on
// first use, and shared; a Counter is safe for concurrent use. Encoding
// picks one by name and reports ErrUnknownEncoding for a name the offline
// loader does not carry. Cache remembers the counts of texts seen again.
//
// Counting is ordinary encoding, which treats text such as
// "<|endoftext|>" as plain bytes: user text cannot smuggle in special tokens,
// and a count never panics on them.
//
// The merge step is quadratic in the length of one pre-token: a
// run of 16 KB of a single letter or of spaces takes about 0.2 s to count,
// and invalid UTF-8 (each byte becomes a three-byte U+FFFD) about eight times
// more. Ordinary prose splits into short pre-tokens and counts in
// microseconds; bound text lengths where it enters the system.
//
// Words is the estimator of the system this one is compatible with: the
// number of whitespace-separated words, at least 1. It is cheap and only an
// estimate; the packer uses it in conformance mode to reproduce the
// original's arithmetic.
//
//	tokens.Words{}.Count("Prefer compact int8 embeddings.") // 4
package tokens
