// Package backup copies a data directory while it serves writes, to a
// directory or an S3 bucket, and restores a copy into an empty data
// directory, verifying every checksum before anything may open it.
//
// A backup holds Components: the engine (Engine: each shard's fresh
// checkpoint and its log files' prefixes up to the last record synced,
// and the catalog, from Engine.HoldForBackup) and any store that keeps
// its files alike (the server adds its streams). Run holds every
// component, opens the files, lets them reclaim again, and copies them
// under the component's name, hashing each (XXH64) on the way; the
// manifest (MANIFEST.json: every file's path, size and hash, each
// shard's covered log index) is written last, so a backup interrupted by
// a crash has none, and Restore and Verify refuse it (ErrIncomplete)
// rather than restore part of it.
//
//	m, err := backup.Run(ctx, backup.NewDir("/backups/monday"), backup.Options{}, backup.Engine(engine))
//	...
//	m, err = backup.Restore(ctx, backup.NewDir("/backups/monday"), "/var/lib/ts", backup.Options{})
//
// Restore writes a marker file (temporalstore.RestoreMarker) into each
// component's directory first, which makes the engine refuse to open it,
// and removes it only once every file is written, synced and checked; a
// restore that fails removes what it wrote. Manager runs one backup at a
// time in the background for the server's BGSAVE, LASTSAVE and /backup.
package backup
