package s3api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// apiError is an S3 error response: its code, HTTP status and message.
type apiError struct {
	Code    string
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("s3api: %s: %s", e.Code, e.Message) }

func newErr(code string, status int, format string, args ...any) *apiError {
	return &apiError{Code: code, Status: status, Message: fmt.Sprintf(format, args...)}
}

func errNotImplemented(what string) *apiError {
	return newErr("NotImplemented", http.StatusNotImplemented, "%s is not implemented", what)
}

func errMethodNotAllowed(m string) *apiError {
	return newErr("MethodNotAllowed", http.StatusMethodNotAllowed, "the method %s is not allowed against this resource", m)
}

func errInvalidArgument(format string, args ...any) *apiError {
	return newErr("InvalidArgument", http.StatusBadRequest, format, args...)
}

func errAccessDenied(format string, args ...any) *apiError {
	return newErr("AccessDenied", http.StatusForbidden, format, args...)
}

func errSignature() *apiError {
	return newErr("SignatureDoesNotMatch", http.StatusForbidden, "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

func errMalformedXML() *apiError {
	return newErr("MalformedXML", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema.")
}

// sentinelErrors maps the store's errors to S3's codes and statuses.
var sentinelErrors = []struct {
	err    error
	code   string
	status int
}{
	{matrixobject.ErrNoSuchBucket, "NoSuchBucket", http.StatusNotFound},
	{matrixobject.ErrNoSuchKey, "NoSuchKey", http.StatusNotFound},
	{matrixobject.ErrNoSuchUpload, "NoSuchUpload", http.StatusNotFound},
	{matrixobject.ErrBucketNotEmpty, "BucketNotEmpty", http.StatusConflict},
	{matrixobject.ErrBucketExists, "BucketAlreadyOwnedByYou", http.StatusConflict},
	{matrixobject.ErrInvalidBucketName, "InvalidBucketName", http.StatusBadRequest},
	{matrixobject.ErrInvalidKey, "InvalidArgument", http.StatusBadRequest},
	{matrixobject.ErrInvalidRange, "InvalidRange", http.StatusRequestedRangeNotSatisfiable},
	{matrixobject.ErrQuotaExceeded, "QuotaExceeded", http.StatusForbidden},
	{matrixobject.ErrTooLarge, "EntityTooLarge", http.StatusBadRequest},
	{matrixobject.ErrTooSmall, "EntityTooSmall", http.StatusBadRequest},
	{matrixobject.ErrSHA256Mismatch, "XAmzContentSHA256Mismatch", http.StatusBadRequest},
	{matrixobject.ErrBadDigest, "BadDigest", http.StatusBadRequest},
	{matrixobject.ErrInvalidPartOrder, "InvalidPartOrder", http.StatusBadRequest},
	{matrixobject.ErrInvalidPart, "InvalidPart", http.StatusBadRequest},
	{matrixobject.ErrInvalidArgument, "InvalidArgument", http.StatusBadRequest},
	{matrixobject.ErrOffsetMismatch, "InvalidWriteOffset", http.StatusBadRequest},
	{matrixobject.ErrClosed, "ServiceUnavailable", http.StatusServiceUnavailable},
}

// toAPIError turns any error into the S3 error to answer with.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	for _, s := range sentinelErrors {
		if errors.Is(err, s.err) {
			return &apiError{Code: s.code, Status: s.status, Message: err.Error()}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return newErr("RequestTimeout", http.StatusBadRequest, "%v", err)
	}
	return newErr("InternalError", http.StatusInternalServerError, "We encountered an internal error. Please try again.")
}
