package httpapi

import "github.com/temporalstore/temporalstore-go/temporalstore/wire"

// The request and reply shapes, their codecs and the status codes are
// package wire's, which a client imports without the server; these names
// keep them reachable from here.
type (
	Request         = wire.Request
	BatchRequest    = wire.BatchRequest
	Command         = wire.Command
	ExecuteResponse = wire.ExecuteResponse
	BatchResponse   = wire.BatchResponse
	Response        = wire.Response
	Status          = wire.Status
	StatusError     = wire.StatusError
	Bytes           = wire.Bytes
	Text            = wire.Text
	Point           = wire.Point
	RawValue        = wire.RawValue
)

// Status codes and content types (see package wire).
const (
	CodeOK             = wire.CodeOK
	CodeBadRequest     = wire.CodeBadRequest
	CodeUnauthorized   = wire.CodeUnauthorized
	CodeForbidden      = wire.CodeForbidden
	CodeNotFound       = wire.CodeNotFound
	CodeUnsupported    = wire.CodeUnsupported
	CodeNotReady       = wire.CodeNotReady
	CodeTooLarge       = wire.CodeTooLarge
	CodeInternal       = wire.CodeInternal
	ContentTypeJSON    = wire.ContentTypeJSON
	ContentTypeMsgpack = wire.ContentTypeMsgpack
)

// The surface's own errors (see package wire).
var (
	ErrBadRequest   = wire.ErrBadRequest
	ErrUnauthorized = wire.ErrUnauthorized
	ErrForbidden    = wire.ErrForbidden
	ErrUnsupported  = wire.ErrUnsupported
	ErrNotFound     = wire.ErrNotFound
	ErrInternal     = wire.ErrInternal
)
