// Package feastbare is the ceiling of the Feast benchmark's command plugin:
// the HTTP surface's /batch_execute (net/http, the wire package's decoding
// and encoding, as the server has them) over rows kept in a Go map under
// one mutex, with no engine behind it: no shards, no log, no TTLs.
//
// It serves what the plugin sends in `make bench-feast`: row_write_batch
// (written only when newer, the event time kept as a serialized
// google.protobuf.Timestamp, as the engine keeps it with ts_format proto),
// row_read_batch, scan with a suffix, and delete_keys; any other kind is
// answered unsupported. Its latency over Redis's through Feast is what the
// plugin reaches when the server's storage costs nothing: the part of the
// goal the engine can move. `bench feastbare --addr 127.0.0.1:PORT` runs it
// until it is killed.
package feastbare
