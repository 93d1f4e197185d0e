package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
)

// pollEvery is how often backup asks the server how its backup goes.
const pollEvery = 200 * time.Millisecond

// backupResult is backup's result.
type backupResult struct {
	OK     bool   `json:"ok"`
	Target string `json:"target"`
	// Bytes and Took describe the finished backup; Error is why it failed.
	Bytes  int64         `json:"bytes"`
	Took   time.Duration `json:"took_ns"`
	Error  string        `json:"error,omitempty"`
	Status backup.Status `json:"status"`
}

func (a *app) backupCmd() *cobra.Command {
	var name, to string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Back up a running server and follow the backup to its end",
		Long: "backup asks the server (POST /backup on --http) to back itself up while it serves writes: a consistent " +
			"copy of every shard, with a manifest of checksums (XXH64), to the server's backup directory (--to dir) or " +
			"S3 bucket (--to s3), as the server's --backup-* flags set them. It then follows the backup with a " +
			"progress bar until it ends, and exits 1 if it fails. Interrupting tsctl leaves the backup running.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to != "" && to != "dir" && to != "s3" {
				return fmt.Errorf("%w: --to %q is not dir or s3", errUsage, to)
			}
			return a.runBackup(cmd.Context(), name, to)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the backup's name (letters, digits, _ . -); default: its start time")
	cmd.Flags().StringVar(&to, "to", "", "where it goes: dir or s3; default: the server's --backup-to")
	return cmd
}

func (a *app) runBackup(ctx context.Context, name, to string) error {
	var before backup.Status
	if _, err := a.call(ctx, http.MethodGet, "/backup", nil, &before); err != nil {
		return err
	}
	var started struct {
		Started bool   `json:"started"`
		Target  string `json:"target"`
	}
	body := map[string]string{}
	if name != "" {
		body["name"] = name
	}
	if to != "" {
		body["to"] = to
	}
	code, err := a.call(ctx, http.MethodPost, "/backup", body, &started)
	if code == http.StatusConflict {
		return fmt.Errorf("a backup is running already (tsctl backup again once it ends): %w", err)
	}
	if err != nil {
		return err
	}
	b := a.newBar("backup", -1, true)
	var st backup.Status
	for {
		select {
		case <-ctx.Done():
			b.finish(false)
			return fmt.Errorf("stopped following the backup to %s, which goes on: %w", started.Target, ctx.Err())
		case <-time.After(pollEvery):
		}
		st = backup.Status{}
		if _, err := a.call(ctx, http.MethodGet, "/backup", nil, &st); err != nil {
			b.finish(false)
			return err
		}
		if st.Running {
			b.set(st.Progress.BytesDone, st.Progress.Bytes)
			continue
		}
		// Ended: counted as a success or a failure since before.
		if st.Backups+st.Failures > before.Backups+before.Failures {
			break
		}
	}
	failed := st.Failures > before.Failures
	if !failed {
		b.set(st.LastBytes, st.LastBytes)
	}
	b.finish(!failed)
	res := &backupResult{OK: !failed, Target: started.Target, Status: st}
	if failed {
		res.Error = st.LastError
	} else {
		res.Bytes, res.Took = st.LastBytes, st.LastTook
	}
	a.emit(res, res.text)
	if failed {
		return errReported
	}
	return nil
}

func (r *backupResult) text(w io.Writer) {
	if !r.OK {
		fmt.Fprintf(w, "backup to %s failed: %s\n", r.Target, r.Error)
		return
	}
	fmt.Fprintf(w, "backup to %s: %s in %s\n", r.Target, humanBytes(r.Bytes), r.Took.Round(time.Millisecond))
}

// restoreResult is restore's result.
type restoreResult struct {
	OK     bool   `json:"ok"`
	Source string `json:"source"`
	Data   string `json:"data"`
	// Components are the directories of Data the backup filled (engine,
	// streams).
	Components []string      `json:"components"`
	Created    time.Time     `json:"created"`
	Files      int           `json:"files"`
	Bytes      int64         `json:"bytes"`
	Shards     int           `json:"shards"`
	Took       time.Duration `json:"took_ns"`
}

func (a *app) restoreCmd() *cobra.Command {
	var from string
	var s3 s3Flags
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore a backup into a stopped server's empty data directory",
		Long: "restore copies the backup at --from (a directory, or s3://bucket/prefix with --s3-endpoint and " +
			"--s3-key) into the data directory --data: each of its components (engine, streams) into its " +
			"directory there, checking every file's size and checksum as it writes it. Those directories must be " +
			"empty or absent, so the server must be stopped: restore into a new --data directory and start the " +
			"server on it. A failed restore removes what it wrote.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return fmt.Errorf("%w: restore needs --from", errUsage)
			}
			return a.runRestore(cmd.Context(), &s3, from)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the backup: a directory or s3://bucket/prefix")
	s3.add(cmd)
	return cmd
}

func (a *app) runRestore(ctx context.Context, s3 *s3Flags, from string) error {
	src, closeSrc, err := s3.source(ctx, from)
	if err != nil {
		return err
	}
	defer closeSrc()
	started := time.Now()
	b := a.newBar("restore", -1, true)
	m, err := backup.Restore(ctx, src, a.dataDir, backup.Options{Progress: func(p backup.Progress) { b.set(p.BytesDone, p.Bytes) }})
	b.finish(err == nil)
	if errors.Is(err, backup.ErrNotEmpty) {
		return fmt.Errorf("%w (is the server running? stop it, and restore into a new --data directory or move that one away)", err)
	}
	if err != nil {
		return fmt.Errorf("restore of %s: %w", src, err)
	}
	res := &restoreResult{OK: true, Source: src.String(), Data: a.dataDir, Components: m.Components, Created: m.Created,
		Files: len(m.Files), Bytes: m.Bytes, Shards: len(m.Shards), Took: time.Since(started)}
	a.emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "restored %s (made %s) into %s (%s): %d files, %d engine shards, %s in %s\n", res.Source,
			res.Created.Format(time.RFC3339), res.Data, strings.Join(res.Components, ", "), res.Files, res.Shards,
			humanBytes(res.Bytes), res.Took.Round(time.Millisecond))
	})
	return nil
}
