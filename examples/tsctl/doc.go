// Command tsctl is the TemporalStore administration tool: it inspects and
// verifies a server's data directory offline, starts and follows backups of
// a running server, restores one into a new data directory, exports a
// server's keys to a JSON Lines file and imports them back, and manages
// tables and tenants over the server's HTTP API.
//
//	tsctl inspect --data ./data
//	tsctl verify --data ./data
//	tsctl verify --backup ./data/backups/20250101T000000.000Z
//	tsctl backup --name nightly
//	tsctl restore --from ./data/backups/nightly --data ./restored
//	tsctl export --out keys.jsonl
//	tsctl import --in keys.jsonl --replace
//	tsctl table list
//	tsctl tenant set acme --qps 500
//
// # Global flags
//
// --http and --resp address the server (defaults 127.0.0.1:17102 and
// 127.0.0.1:6379, or TS_HTTP_ADDR and TS_RESP_ADDR); --token (TS_TOKEN) is
// sent as the HTTP bearer token and as RESP's AUTH; --data (default ./data)
// is the data directory of the offline commands. --output json writes each
// command's result as one JSON document on stdout (a failure as
// {"ok":false,"error":...}); text is the default. Long jobs draw a progress
// bar with an estimate of the time left on stderr when stderr is a terminal,
// or always with --progress; never on stdout.
//
// # Exit status
//
// 0 on success; 1 when the command fails, verify finds damage, or a backup
// fails; 2 for a usage error.
//
// # Offline commands
//
// inspect and verify read the data directory without writing to it: they
// open no log and take no lock (a log's Open would cut a torn tail and
// preallocate). Both may run while the server runs, but its files then
// change under them: they say so when a shard's LOCK is held. verify
// checks every checkpoint image (magic, format, CRC32C, and that it
// decodes) and every log segment of the engine's shards and of the
// streams (frames, index continuity; a torn final write is normal after a
// crash and reported, not an error), and that each shard has a checkpoint
// and log it can open from. --data may also name an engine directory or a
// directory backup. restore refuses a data directory whose engine or
// streams directory holds anything: stop the server, and restore into a
// new --data directory (or move the old directories away).
//
// # Export format
//
// export writes one JSON object a line for each key of database 0:
//
//	{"key":"user:1","type":"string","ttl_ms":5000,"value":"..."}
//	{"key":"h","type":"hash","fields":{"f":"v"}}
//	{"key":"s","type":"set","members":["a","b"]}
//	{"key":"z","type":"zset","scores":[{"member":"a","score":1.5}]}
//	{"key":"l","type":"list","items":["a","b"]}
//	{"key":"f","type":"series","points":[{"ts":1700000000000,"value":"..."}]}
//	{"key":"x","type":"stream","entries":[{"id":"1-1","fields":["f","v"]}]}
//
// Byte strings (keys, values, fields, members, point values, stream fields)
// are JSON strings holding the bytes as UTF-8 text. A line any of whose
// byte strings is not valid UTF-8 carries "encoding":"base64" and holds
// every byte string of the line in standard base64 instead, so that any
// bytes round-trip exactly while text stays readable. ttl_ms is the time
// to live left when the key was read, omitted for a key without one; a
// zset score that is not finite is the string "inf" or "-inf". A stream's
// consumer groups are not exported.
package main
