package extract

import "strings"

// Chunking bounds, in characters (runes).
const (
	ChunkMax     = 1400 // the longest chunk
	ChunkOverlap = 120  // how far the next chunk starts before a cut
	chunkMinCut  = 700  // a cut back to a boundary must leave at least this much
)

// Chunk is one piece of a document: its text and where it starts in the
// document (after runs of blank lines are collapsed), in runes.
type Chunk struct {
	Text  string
	Start int
}

// Chunks splits a document into overlapping chunks. Runs of three or more
// newlines collapse to two first. An empty document has no chunks.
func Chunks(doc string) []Chunk {
	for strings.Contains(doc, "\n\n\n") {
		doc = strings.ReplaceAll(doc, "\n\n\n", "\n\n")
	}
	r := []rune(doc)
	var out []Chunk
	for start := 0; start < len(r); {
		end := min(start+ChunkMax, len(r))
		if end < len(r) {
			if cut := lastBoundary(r[start:end]); cut > chunkMinCut {
				end = start + cut
			}
		}
		if text := strings.TrimSpace(string(r[start:end])); text != "" {
			out = append(out, Chunk{Text: text, Start: start})
		}
		if end == len(r) {
			break
		}
		// The next chunk overlaps the cut, but always moves forward.
		start = max(end-ChunkOverlap, start+1)
	}
	return out
}

// lastBoundary is the offset just past the last paragraph break or
// sentence end (". ") in r, or 0 when it has none.
func lastBoundary(r []rune) int {
	for i := len(r) - 2; i >= 0; i-- {
		if (r[i] == '\n' && r[i+1] == '\n') || (r[i] == '.' && r[i+1] == ' ') {
			return i + 2
		}
	}
	return 0
}
