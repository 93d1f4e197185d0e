// Package backupbench is `bench backup`: an online backup and a restore
// of a data directory of about 1 GiB by package temporalstore/backup,
// against `cp -a` of the same directory followed by `sync`, alternating,
// repeated. Both are timed from start to durable; MB/s counts the data
// directory's bytes for both, so the figures compare the same job.
//
//	cd tools && go run ./bench backup
//	BENCH_QUICK=1 go run ./bench backup     # 256 MiB, 3 repeats
//
// The last line is `backup: backup_vs_cp_ratio=... restore_vs_cp_ratio=...`
// (medians of the per-repeat ratios; above 1, ours is faster).
package backupbench
