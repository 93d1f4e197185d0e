package benchkit

import "golang.org/x/sys/unix"

// Filesystem magic numbers from statfs(2) for the filesystems a benchmark
// directory is likely to sit on.
var fsNames = map[int64]string{
	0xEF53:     "ext4", // also ext2/ext3; they share the magic
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0x794C7630: "overlayfs",
	0x2FC12FC1: "zfs",
	0xF2F52010: "f2fs",
	0x6969:     "nfs",
	0x65735546: "fuse",
	0x858458F6: "ramfs",
}

// Filesystem names the filesystem type that holds dir ("" when unknown).
func Filesystem(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return ""
	}
	if name, ok := fsNames[int64(st.Type)]; ok {
		return name
	}
	return "unknown"
}
