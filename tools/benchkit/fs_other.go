//go:build !linux

package benchkit

// Filesystem names the filesystem type that holds dir; it is only known on
// Linux and returns "" elsewhere.
func Filesystem(string) string { return "" }
