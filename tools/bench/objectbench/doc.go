// Package objectbench is the `bench object` benchmark: durable PUT and GET
// of matrixobject objects of several sizes (4 KiB, 1 MiB and 64 MiB by
// default) against the physical limit of the disk under the same directory,
// measured in the same run.
//
// The disk's limit ("disk") is what a program gets with no object store at
// all: PUT writes the same bytes to a new file with one write(2) per MiB and
// one fsync, GET reads the file back. Ours ("ours") is matrixobject.Store
// through its Go API: PutObject (temporary file, MD5 and SHA-256 of the
// content, trailer, fsync, rename, directory fsync) and GetObject. Its PUT
// bodies are *bytes.Reader values (written in place) or, with --body stream,
// plain io.Readers (read chunk by chunk, as S3 request bodies are). For each
// size the two alternate (ours, disk, ours, disk, ...) for the configured
// repeats, each run in a fresh directory writing distinct keys/files.
//
// Reads come from the disk, not the page cache: before the GET phase every
// file under the run's directory is dropped from the page cache with
// posix_fadvise(POSIX_FADV_DONTNEED) (after fsync, so the pages are clean
// and are evicted), the same for both systems.
//
// Results go to bench-results/object.json (every figure as min/median/max
// over repeats, ratios ours/disk per repeat pair, above 1 meaning ours is
// better); stdout gets a table and, last, the summary line
//
//	object: put64m_vs_disk_ratio=… get64m_vs_disk_ratio=… put4k_per_s=…
//
// A run fails only when a system fails (an I/O error); figures never gate.
package objectbench
