// Package cachekey builds the block keys TemporalStore's Rust
// implementation ("the original" in comments below) gives a storage
// engine's blocks: a string value, a hash field, a set's members, a feature
// query's result, a page of a segment (with its routing slot and
// generation). Their bytes are exact, so that a cache shared with that
// implementation's layout reads the same keys. The namespace of each
// decides its block kind (blockfmt.KindForNamespace), and so its initial
// hotness. A cache user with keys of its own needs none of this:
// blockfmt.KeyOf (matrixcache.KeyOf) makes a key of a string.
package cachekey
