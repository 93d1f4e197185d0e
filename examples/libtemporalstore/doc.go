//go:build cgo

// Command libtemporalstore is TemporalStore's C ABI: a shared library
// through which a program in any language that calls C runs the engine's
// commands, on an engine in its own process or on a running server.
//
// Build it (cgo and a C compiler are required) with
//
//	go build -buildmode=c-shared -o libtemporalstore.so ./examples/libtemporalstore
//
// or `make cabi`, include temporalstore.h (in this directory; go build
// also writes a header beside the library, cgo's spelling of the same
// functions) and link with -ltemporalstore. testdata/smoke.c is a complete
// C program using every function.
//
// # Functions
//
//	ts_handle ts_open(const char *data_dir, char **err);
//	ts_handle ts_connect(const char *url, char **err);
//	ts_handle ts_connect_token(const char *url, const char *token, char **err);
//	int ts_execute(ts_handle h, const uint8_t *req, size_t req_len, uint8_t **resp, size_t *resp_len);
//	void ts_free(void *p);
//	int ts_close(ts_handle h);
//
// ts_open opens the engine in a data directory with the default wiring
// (package local) and durable commits; ts_connect speaks MessagePack to a
// server's HTTP command surface (package client), ts_connect_token with a
// bearer token. ts_execute takes one
// request as the server's /execute takes it in MessagePack (package wire's
// Request: namespace, table_name, tenant, and a command of the original's
// kinds or the engine's own) and answers as /execute does; both handles
// decode, translate and encode with package wire, so a reply is the same
// bytes the server would send. It returns 0 (TS_OK) when the command ran or
// was refused by the engine or the server (the reply's status says which);
// a negative code when the request was not taken (TS_ERR_REQUEST: the
// server's 400), the handle is not open (TS_ERR_HANDLE), the server could
// not be reached (TS_ERR_REMOTE), the library failed (TS_ERR_INTERNAL), or
// a pointer argument is NULL (TS_ERR_ARGUMENT), with a reply whose status
// says why when resp is not NULL. The original's context_* kinds,
// which a server serves beside the engine, are answered "unsupported".
// ts_close closes the engine or the connection; any later use of the
// handle answers TS_ERR_HANDLE.
//
// # Ownership
//
// Every buffer and error string the library returns is allocated with
// malloc and belongs to the caller, who frees it with ts_free (free from
// the same C library works as well). The library copies the request and
// keeps no pointer into the caller's memory once a call returns.
//
// # Handles and threads
//
// A handle is a runtime/cgo.Handle: an integer, never 0 and never reused
// in the process, so a closed handle is reliably refused. Handles are safe
// for concurrent use from any number of threads: the engine and the HTTP
// client both are. A ts_close racing with ts_execute on the same handle
// is safe, but the command may be answered with the engine's
// shard_not_loaded status, or run on a connection being closed. No Go
// panic raised while a call runs crosses into C: it is answered as
// TS_ERR_INTERNAL (ts_open and ts_connect: 0 and an error message).
package main
