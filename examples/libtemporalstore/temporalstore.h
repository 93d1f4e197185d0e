/*
 * temporalstore.h: the C ABI of TemporalStore (libtemporalstore).
 *
 * Build the library with
 *   go build -buildmode=c-shared -o libtemporalstore.so ./examples/libtemporalstore
 * and link with -ltemporalstore. A handle runs commands on an engine in
 * the process (ts_open) or on a server's HTTP command surface (ts_connect).
 *
 * Commands and replies are MessagePack, in the shapes of the server's
 * /execute: the request {"namespace"?, "table_name"?, "tenant"?,
 * "command": {"kind": ..., fields}}, the reply {"status": {"ok", "code",
 * "message"}, "response": {"kind", ...}}.
 *
 * Ownership: every buffer and string the library returns was allocated
 * with malloc; the caller releases it with ts_free. The library keeps no
 * pointer to the caller's memory after a call returns.
 *
 * Threads: a handle may be used from several threads at once; ts_close
 * must not race with calls the caller still expects to succeed (they may
 * answer the engine's "closed" status).
 */
#ifndef TEMPORALSTORE_H
#define TEMPORALSTORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A handle of an open engine or connection. 0 is never a valid handle. */
typedef uintptr_t ts_handle;

/* Result codes of ts_execute and ts_close. */
#define TS_OK 0
/* The handle is not open: closed already, never opened, or 0. */
#define TS_ERR_HANDLE (-1)
/* The request was not taken: it does not decode as MessagePack, has no
 * command, or the command is malformed or of an unknown kind (the
 * server's HTTP 400). The reply's status code is "bad_request". */
#define TS_ERR_REQUEST (-2)
/* A connection's server could not be reached, or its reply could not be
 * read; the reply's status says why. The command may have run. */
#define TS_ERR_REMOTE (-3)
/* The library failed: a panic was contained, or ts_close could not
 * close cleanly (the handle is released all the same). */
#define TS_ERR_INTERNAL (-4)
/* A required pointer argument is NULL. */
#define TS_ERR_ARGUMENT (-5)

/*
 * ts_open opens (creating if needed) the engine in the directory data_dir,
 * with durable commits (a write is acknowledged once it is fsynced). A
 * directory is open in one handle at a time.
 *
 * Returns the handle, or 0 on failure with *err set to a message the
 * caller frees with ts_free (err may be NULL).
 */
ts_handle ts_open(const char *data_dir, char **err);

/*
 * ts_connect returns a connection to the server whose HTTP command surface
 * is at url (e.g. "http://127.0.0.1:17102"); it speaks MessagePack. No
 * request is sent until ts_execute: a server that is down fails there.
 *
 * Returns the handle, or 0 on failure (a URL that is not http(s)) with
 * *err set as ts_open's.
 */
ts_handle ts_connect(const char *url, char **err);

/*
 * ts_connect_token is ts_connect to a server that wants a token: token
 * (NULL or "" for none) is sent as a bearer token with every request. A
 * request the token does not allow is answered with status "unauthorized"
 * or "forbidden", as over HTTP.
 */
ts_handle ts_connect_token(const char *url, const char *token, char **err);

/*
 * ts_execute runs one command: req (req_len bytes) is an /execute request
 * in MessagePack. It sets *resp to the reply (*resp_len bytes), which the
 * caller frees with ts_free, and returns TS_OK when the command ran, or
 * was refused by the engine or the server: its success or failure is the
 * reply's status, as over HTTP. It blocks until the command completes.
 *
 * On another result code *resp is, when possible, a reply whose status
 * says why (and the empty response); otherwise NULL with *resp_len 0.
 * TS_ERR_ARGUMENT leaves *resp untouched when resp or resp_len is NULL.
 */
int ts_execute(ts_handle h, const uint8_t *req, size_t req_len, uint8_t **resp, size_t *resp_len);

/* ts_free frees a buffer or string the library returned; NULL is a no-op. */
void ts_free(void *p);

/*
 * ts_close closes the engine (flushing and syncing it) or the connection
 * (its idle network connections), and releases the handle: any later use
 * of h answers TS_ERR_HANDLE. Returns TS_OK, TS_ERR_HANDLE, or
 * TS_ERR_INTERNAL when closing failed.
 */
int ts_close(ts_handle h);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALSTORE_H */
