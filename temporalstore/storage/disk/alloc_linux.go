package disk

import (
	"os"
	"syscall"
)

// allocated is the disk space a file takes: its blocks, as stat reports.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return roundBlock(fi.Size())
}
