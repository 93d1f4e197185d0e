package sharedlog

import (
	"os"
	"syscall"
)

// datasync makes f's data durable; its size is data here.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
