package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// ErrBackupRunning is what a Backups' StartBackup returns (wrapped or
// not) while a backup runs: /backup answers 409.
var ErrBackupRunning = errors.New("httpapi: a backup is running")

// Backups starts and reports the server's backups for /backup.
type Backups interface {
	// StartBackup starts a backup named name (empty: one from the time)
	// to the destination to ("dir", "s3"; empty: the server's default) and
	// returns where it goes. An error wrapping temporalstore.ErrInvalid is the caller's.
	StartBackup(name, to string) (string, error)
	// BackupStatus is the running and the last backup, as JSON.
	BackupStatus() any
}

// backup serves /backup: GET the status (any token), POST {"name",
// "to"} to start one (read-write tokens), answered 202 with where it goes.
func (h *Handler) backup(w http.ResponseWriter, r *http.Request) {
	const route = "/backup"
	acc := h.tokens.check(r)
	if acc == accessNone {
		h.unauthorized(w, route, false, false)
		return
	}
	if r.Method == http.MethodGet {
		h.sendJSON(w, route, http.StatusOK, h.opts.Backups.BackupStatus())
		return
	}
	if acc != accessWrite {
		h.sendStatus(w, route, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a read-only token cannot start a backup"})
		return
	}
	var req struct {
		Name string `json:"name"`
		To   string `json:"to"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: err.Error()})
			return
		}
	}
	target, err := h.opts.Backups.StartBackup(req.Name, req.To)
	switch {
	case errors.Is(err, ErrBackupRunning):
		h.sendStatus(w, route, http.StatusConflict, false, Status{Code: CodeBadRequest, Message: err.Error()})
	case errors.Is(err, ts.ErrInvalid):
		h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: err.Error()})
	case err != nil:
		h.sendStatus(w, route, http.StatusInternalServerError, false, Status{Code: CodeInternal, Message: err.Error()})
	default:
		h.sendJSON(w, route, http.StatusAccepted, map[string]any{"started": true, "target": target})
	}
}

// sendJSON replies with v as JSON.
func (h *Handler) sendJSON(w http.ResponseWriter, route string, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.sendStatus(w, route, http.StatusInternalServerError, false, Status{Code: CodeInternal, Message: err.Error()})
		return
	}
	h.send(w, route, code, false, append(b, '\n'))
}
