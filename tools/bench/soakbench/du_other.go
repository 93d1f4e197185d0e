//go:build !unix

package soakbench

import "io/fs"

// diskUsage is the space fi takes on disk: here, its size.
func diskUsage(fi fs.FileInfo) int64 { return fi.Size() }
