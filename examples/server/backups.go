package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
)

// backupConfig is where the server's backups go (--backup-*).
type backupConfig struct {
	dir string // default: <data>/backups
	to  string // "dir" or "s3"
	s3  backup.S3Options
}

// backups serves SAVE, BGSAVE and LASTSAVE (resp.Saver) and /backup
// (httpapi.Backups) with one backup.Manager: each backup a directory under
// --backup-dir, or a prefix of --backup-s3-bucket, named by its start
// time.
type backups struct {
	m   *backup.Manager
	cfg backupConfig
	now func() time.Time
}

var backupNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func (b *backups) target(ctx context.Context, name, to string) (backup.Target, error) {
	if name == "" {
		name = b.now().UTC().Format("20060102T150405.000Z")
	}
	if !backupNameRE.MatchString(name) {
		return nil, fmt.Errorf("%w: backup name %q (letters, digits, _ . -)", temporalstore.ErrInvalid, name)
	}
	if to == "" {
		to = b.cfg.to
	}
	switch to {
	case "dir":
		return backup.NewDir(filepath.Join(b.cfg.dir, name)), nil
	case "s3":
		if b.cfg.s3.Endpoint == "" || b.cfg.s3.Bucket == "" {
			return nil, fmt.Errorf("%w: no S3 destination (--backup-s3-endpoint and --backup-s3-bucket)", temporalstore.ErrInvalid)
		}
		o := b.cfg.s3
		o.Prefix = name
		return backup.NewS3(ctx, o)
	}
	return nil, fmt.Errorf("%w: backup destination %q (dir or s3)", temporalstore.ErrInvalid, to)
}

// StartBackup implements httpapi.Backups.
func (b *backups) StartBackup(name, to string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t, err := b.target(ctx, name, to)
	if err != nil {
		return "", err
	}
	if err := b.m.Start(t); err != nil {
		if errors.Is(err, backup.ErrRunning) {
			return "", fmt.Errorf("%w: %w", httpapi.ErrBackupRunning, err)
		}
		return "", err
	}
	return t.String(), nil
}

// streamsComponent is ferricstore's streams and flows as a backup
// component ("streams"); st is set once they are open (none without RESP).
type streamsComponent struct {
	dir string
	st  *ferricstore.Store
}

func (*streamsComponent) Name() string { return "streams" }

func (c *streamsComponent) Hold(ctx context.Context) (backup.Held, error) {
	if c.st == nil {
		return backup.Held{Dir: c.dir, Release: func() {}}, nil
	}
	files, release, err := c.st.HoldForBackup(ctx)
	if err != nil {
		return backup.Held{}, err
	}
	h := backup.Held{Dir: c.dir, Release: release}
	for _, f := range files {
		h.Files = append(h.Files, backup.File{Path: f.Path, Size: f.Size})
	}
	return h, nil
}

// BackupStatus implements httpapi.Backups.
func (b *backups) BackupStatus() any { return b.m.Status() }

// errSaveInProgress is Redis's answer to a BGSAVE while one runs.
//
//lint:ignore ST1005 Redis's reply, word for word
var errSaveInProgress = errors.New("Background save already in progress")

// BackgroundSave implements resp.Saver: BGSAVE.
func (b *backups) BackgroundSave() error {
	_, err := b.StartBackup("", "")
	if errors.Is(err, httpapi.ErrBackupRunning) {
		return errSaveInProgress
	}
	return err
}

// Save implements resp.Saver: SAVE waits for a backup of its own.
func (b *backups) Save(ctx context.Context) error {
	if err := b.BackgroundSave(); err != nil {
		return err
	}
	return b.m.Wait(ctx)
}

// LastSave implements resp.Saver.
func (b *backups) LastSave() int64 {
	if t := b.m.Status().LastSave; !t.IsZero() {
		return t.Unix()
	}
	return 0
}
