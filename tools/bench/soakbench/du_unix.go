//go:build unix

package soakbench

import (
	"io/fs"
	"syscall"
)

// diskUsage is the space fi takes on disk: its allocated 512-byte blocks.
func diskUsage(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
