package embed

import "github.com/temporalstore/temporalstore-go/matrixark/internal/h64"

// H64 is FNV-1a 64 over the bytes of s, with 0 mapped to 1 so that 0 can
// mean "no hash" in stored records. H64("foobar") = 0x85944171f73967e8.
func H64(s string) uint64 { return h64.Sum(s) }
