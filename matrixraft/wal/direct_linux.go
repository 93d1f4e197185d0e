//go:build linux

package wal

import "syscall"

const oDirect = syscall.O_DIRECT
