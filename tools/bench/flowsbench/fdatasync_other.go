//go:build !linux

package flowsbench

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
