package storage

// File is a prefix of one of a log's files.
type File struct {
	// Name is the file's name in the log's directory.
	Name string
	// Size is the length of the prefix.
	Size int64
}

// FileLog is an optional interface of a Log kept as files in its shard's
// directory, which a backup copies while appends go on.
type FileLog interface {
	// Files returns the log's files, each with the length of the prefix
	// that holds the records up to index last: copied into an empty
	// directory, they open as a log of the records FirstIndex..last. The
	// prefixes do not change as later records are appended; a file a
	// later TruncateFront deletes stays readable to a copier that opened
	// it first. last must have been synced.
	Files(last uint64) ([]File, error)
}
