//go:build !linux

package disk

import "os"

// allocated is the disk space a file takes, estimated as its size in whole
// 4 KiB blocks where stat's block count is not at hand.
func allocated(fi os.FileInfo) int64 { return roundBlock(fi.Size()) }
