// Package largelog is a storage.Log that keeps its large records in files
// of their own beside the log, so that a value may be as large as the
// surfaces take (512 MiB by default) while the log's own records stay
// within its record size.
//
//	opts.OpenLog = largelog.Wrap(disk.OpenLog, largelog.Options{})
//
// A record of one value over Options.Threshold (1 MiB; Options.Own says
// which records hold one value), or any record over the wrapped log's own
// limit, is written to large-<hash>.rec in the log's directory, named by
// its BLAKE3 hash (to a temporary file first, fsynced while it is hashed,
// renamed, the directory fsynced), and the log gets a small pointer record
// in its place; Read and iterators return the whole record again, checked
// against its hash. The engine above sees the same records as with the
// plain log: the index, replay, compaction (which
// moves a live large value as any other) and checkpoints are unchanged.
//
// A file is referenced by the pointer records that name it. Before a
// pointer is appended, a journal (large.journal, 52-byte CRC32C-checked
// entries) notes that a record of that hash will follow the log's current
// last index; once the append returns, a second entry notes its index. A
// file goes when every record naming it is before the log's first index
// (TruncateFront reclaimed it): so a value overwritten or deleted releases
// its file once compaction has moved the live records out of the old
// segment and the segment is gone. Open settles what a crash left: it
// scans the log after a pending entry for its pointer, and removes the
// files no record names (a large write that was never appended, or whose
// append was cut).
//
// Over a durable log every file, and its pending entry, is fsynced before
// its pointer is appended, so no record ever names a file that is not
// durable. Over a log synced on an interval (and a storage.SyncHook, as
// the disk log is) a large write costs no fsync, as a small one does not:
// the file is written and renamed, and the log's syncs first fsync the
// files placed since the last and note in the journal the index up to
// which every pointer's file is durable. A crash of the machine may then
// leave a pointer on the disk whose file is not; open checks the files of
// the pointers past the last such note and cuts the log before the first
// that is missing or damaged: records no sync had made durable.
//
// The log is a storage.RecordFiles: ReadHead reads a large record only as
// far as its head (a key), and OpenRecord hands its open file with a
// Verify of the hash, for a reader that sends the value from the file.
//
// The log is a storage.FileLog and a storage.Recoverer when the wrapped
// log is: a backup copies the large files its records name with the
// log's segments.
package largelog
