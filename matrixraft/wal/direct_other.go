//go:build !linux

package wal

// oDirect is zero where O_DIRECT is not available: the "direct" descriptor is
// then an ordinary one, and the aligned writes are merely redundant.
const oDirect = 0
