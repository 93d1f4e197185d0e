package storage

import "os"

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

// RecordFiles is an optional interface of a Log that keeps large records in
// files of their own (package largelog): a reader may look at a record's
// head, or send its bytes from the file, without reading it whole.
type RecordFiles interface {
	// OpenRecord opens the file of the record at index when the log keeps
	// it in one; ok is false for a record the log holds itself (Read it).
	// The caller closes the file.
	OpenRecord(index uint64) (f *RecordFile, ok bool, err error)
	// ReadHead is Read for a reader of a record's first bytes (its key):
	// the record whole when the log holds it itself (len(rec) == size),
	// else the first RecordHeadBytes of its file, checked. size is the
	// record's size.
	ReadHead(index uint64) (rec []byte, size int64, err error)
}

// RecordFile is a record kept in a file of its own, open.
type RecordFile struct {
	*os.File
	// Size is the record's size.
	Size int64
	// Head is the record's first bytes, up to RecordHeadBytes of them,
	// checked against the log's record.
	Head []byte
	// Verify reads the whole file and checks it against the log's record
	// (its hash): a file that fails it is not served.
	Verify func() error
}

// RecordHeadBytes is the most a RecordFile's Head holds.
const RecordHeadBytes = 4 << 10
