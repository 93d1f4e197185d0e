// Command embedded-cache runs matrixcache inside a Go program, on its own:
// no server, no other module of this repository.
//
// It builds a Cache with a small DRAM tier over an SSD tier in a directory,
// writes a key set larger than DRAM (so most values live only on the SSD
// tier), then reads a Zipf-skewed stream of those keys. Hot keys are refilled
// into DRAM and stay there; cold keys are read through from the SSD tier. At
// the end it prints where the reads were answered (DRAM hits, SSD hits,
// misses) and latency percentiles, all taken from Cache.Stats. Progress goes
// to stderr through log/slog; the report goes to stdout.
//
// Usage:
//
//	go run ./examples/embedded-cache [flags]
//	go run ./examples/embedded-cache --keys 200000 --dram-bytes 67108864 --dir /mnt/nvme/cache
//	go run ./examples/embedded-cache --help
//
// Flags:
//
//	--dir          directory of the SSD tier; default a temporary directory
//	               removed at exit. An existing directory keeps the tier's
//	               file (the next run overwrites the same keys).
//	--keys         distinct keys written (default 20000)
//	--reads        reads in the Zipf stream (default 200000)
//	--dram-bytes   DRAM tier capacity in bytes (default 4 MiB)
//	--value-bytes  size of every value in bytes, at least 8 (default 1024)
//	--zipf-s       Zipf exponent s > 1: the larger s, the more reads go to
//	               the hottest keys (default 1.1)
//	--seed         seed of the read stream (default 1)
//
// The latency percentiles are matrixcache's: the upper bound of the
// histogram bucket (10µs, 100µs, 1ms, 10ms) holding the percentile, or the
// largest sample above 10ms, over the calls the cache timed.
package main
