// Package blobbench is `bench blob`: large values through the server,
// against what the machine and Redis do with the same bytes, in one run.
//
// Four comparisons, each arm run in turn within every repeat (ours-blob,
// null-http, disk, ours-resp, redis, sha256; sync(2) before each, so none
// writes back another's dirty pages), repeated (3 by default):
//
//   - Blobs against the disk. Ours is examples/server's /blob routes
//     through the Go client: PutBlob of N blobs of S bytes (64 MiB × 8 by
//     default), each written by the server to a temporary file, hashed,
//     fsynced, renamed into place and its directory fsynced; then GetBlob
//     of each, read to its end. The disk arm does the same write with no
//     server and no hashing (new temporary file in 1 MiB writes, fsync,
//     rename, directory fsync) and reads the files back, in the same
//     filesystem. Both read right after writing, from the page cache as a
//     read soon after an upload would; with --cold (the default) both read
//     everything again after dropping its pages with
//     posix_fadvise(POSIX_FADV_DONTNEED), an extra figure.
//   - Blobs against a null HTTP server, the ceiling of the transfer: a
//     server in this process that writes a PUT's body as the disk arm
//     does and sends a GET's file with sendfile(2), with no hashing and
//     no bookkeeping, read through a plain net/http client.
//   - SHA-256 of the same blobs in this process, on one core, against the
//     disk arm: the digest the blob store computes of every upload, alone,
//     bounds an upload before any transfer.
//   - SET and GET of 64 MiB values over RESP (go-redis, one connection)
//     against redis-server. By default ours runs its table async with
//     fsync every second beside Redis's appendonly appendfsync everysec;
//     --resp-sync always pairs our durable table with appendfsync always.
//     When our server refuses the SET (an error reply: a value larger
//     than the engine takes), its figures are n/a and the reply is in the
//     report; Redis still runs.
//
// Every figure is MB/s (10^6 bytes a second) of one pass over every item.
// Content is incompressible PCG bytes, every item distinct; each read is
// compared byte for byte with what was written, and the SHA-256 the server
// names for each blob with the content's, so no figure comes from wrong
// bytes.
//
//	cd tools && go run ./bench blob
//	BENCH_QUICK=1 go run ./bench blob     # 8 MiB × 4
//
// bench-results/blob.json holds, per figure, ours' and the peer's
// min/median/max over the repeats and the min/median/max of the
// per-repeat ratios ours/peer, with every repeat's. The last line of
// stdout is
//
//	blob: set64m_vs_redis_ratio=… get64m_vs_redis_ratio=… upload_vs_disk_ratio=… download_vs_disk_ratio=… upload_vs_null_http_ratio=… download_vs_null_http_ratio=…
//
// medians of the per-repeat ratios; above 1, ours is faster; n/a where
// ours did not run. The keys keep their names whatever --value-bytes is.
// Figures never make the run fail; only errors do.
package blobbench
