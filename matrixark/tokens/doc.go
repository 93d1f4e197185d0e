// Package tokens counts tokens the way the packer charges them.
//
// A Counter turns a string into a token count and names itself, so that an
// audit can record which tokenizer priced a pack:
//
//	c := tokens.O200k()              // o200k_base BPE, the default
//	n := c.Count("hello world")      // 2
//	name := c.Name()                 // "o200k_base"
//
// O200k and Cl100k are byte-pair encoders built on tiktoken-go with its
// offline loader: the vocabularies are compiled into the binary and nothing
// is downloaded. Building an encoding takes up to a second and a map of about
// 200,000 entries, so each one is built once per process, on first use, and
// shared; a Counter is safe for concurrent use. Encoding picks one by name and
// reports ErrUnknownEncoding for a name the offline loader does not carry.
//
// Counting uses the dependency's ordinary encoder, which treats text such as
// "<|endoftext|>" as plain bytes: user text cannot smuggle in special tokens,
// and a count never panics on them.
//
// The dependency's merge step is quadratic in the length of one pre-token: a
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
