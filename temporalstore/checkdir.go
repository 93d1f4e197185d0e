package temporalstore

import "github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"

// Checking a stopped engine's files offline (tsctl verify): a shard's
// directory holds its checkpoints, checkpoint-<applied>.img, beside its
// log's segments, which matrixraft/wal's Check reads.

// Errors of CheckImage, matched with errors.Is.
var (
	// ErrImageDamaged is a checkpoint that fails its checksum or does not
	// parse. Open skips such an image for an older one, or replays the
	// shard's whole log while it still holds it.
	ErrImageDamaged = shard.ErrImageDamaged
	// ErrImageFormat is a checkpoint of a format this build does not read;
	// Open refuses the shard.
	ErrImageFormat = shard.ErrImageFormat
)

// CheckImage checks the checkpoint file at path as Open would, without
// opening anything for writing: its magic, format and trailing CRC32C, and
// that its index and collections decode. It returns the log index the image
// is applied to.
func CheckImage(path string) (applied uint64, err error) { return shard.CheckImage(path) }
