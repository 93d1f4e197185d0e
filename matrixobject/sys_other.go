//go:build !linux

package matrixobject

import "os"

func fdatasync(f *os.File) error { return f.Sync() }

func startWriteback(*os.File, int64, int64) {}
