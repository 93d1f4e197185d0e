//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockHeld reports whether a process holds the flock of the log's LOCK
// file at path, as an open log does. It opens the file read-only (never
// creating it) and takes a shared lock for an instant, which changes
// nothing on disk; a log opening at that very instant is refused once
// (wal.ErrLocked), as it would be by a second server.
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	return false
}
