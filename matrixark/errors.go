package matrixark

import "errors"

// Errors, checked with errors.Is.
var (
	// ErrInvalid is a request that breaks a rule or a limit: an empty
	// tenant, text over 64 KiB, an unknown kind. Nothing was written.
	ErrInvalid = errors.New("matrixark: invalid request")
	// ErrNotFound is a record that does not exist (an audit by id).
	ErrNotFound = errors.New("matrixark: not found")
	// ErrAuditWrite is a pack whose audit could not be written: no prompt
	// is returned without its record.
	ErrAuditWrite = errors.New("matrixark: pack audit not written")
)
