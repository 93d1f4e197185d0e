//go:build !linux

package wal

import "os"

func fdatasync(f *os.File) error { return f.Sync() }

func fdatasyncNoHandoff(f *os.File) error { return f.Sync() }

func preallocate(f *os.File, size int64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() >= size {
		return nil
	}
	return f.Truncate(size)
}

func writeAtNoHandoff(f *os.File, b []byte, off int64) error {
	_, err := f.WriteAt(b, off)
	return err
}
