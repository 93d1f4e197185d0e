//go:build !linux

package sharedlog

import "os"

func datasync(f *os.File) error { return f.Sync() }
