//go:build !linux

package temporalstore

func availableMemory() int64 { return 0 }
