package temporalstore

import (
	"strconv"
	"strings"
)

// MaxSuggestedCacheBytes caps SuggestedCacheBytes.
const MaxSuggestedCacheBytes = 4 << 30

// SuggestedCacheBytes is a record cache budget (Options.CacheBytes) for a
// serving process that may use memBytes of memory: a sixteenth of it, at
// least DefaultCacheBytes and at most MaxSuggestedCacheBytes;
// DefaultCacheBytes when memBytes is unknown (0 or less). Options keeps
// DefaultCacheBytes, which bounds what an engine embedded in another
// program takes; a server trades memory for speed: a write whose replaced
// record is neither recent nor cached reads it back from the log to check
// its key. On two vCPUs, SETs of 256 B over 100,000 keys at pipeline 16:
// 141–157k a second with 64 MiB, 241–298k with 1 GiB.
func SuggestedCacheBytes(memBytes int64) int64 {
	if memBytes <= 0 {
		return DefaultCacheBytes
	}
	return min(max(memBytes/16, DefaultCacheBytes), MaxSuggestedCacheBytes)
}

// AvailableMemory is the memory this process may use, in bytes: the
// machine's, or its control group's limit when that is lower. 0 when it
// cannot tell.
func AvailableMemory() int64 { return availableMemory() }

// parseMemoryLimit reads a control group's memory limit file: a byte count,
// or "max" (cgroup v2) for none. ok is false for no limit or an unreadable
// value.
func parseMemoryLimit(b []byte) (int64, bool) {
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
