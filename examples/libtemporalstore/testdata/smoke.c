/*
 * smoke.c: the C ABI end to end, as a C program uses it.
 *
 *   smoke embedded DIR   an engine in DIR: writes, reads, bad requests,
 *                        threads, close and reopen, closed handles
 *   smoke connect URL    the server at URL: a write and a read back
 *
 * It speaks MessagePack with the small encoder and decoder below, enough
 * for its own messages. It exits 1 with a message on the first mismatch.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "temporalstore.h"

static void fail(const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	fputs("smoke: ", stderr);
	vfprintf(stderr, format, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ---- MessagePack encoding: maps, strings and binaries ---- */

typedef struct {
	uint8_t b[1024];
	size_t n;
} enc;

static void put(enc *e, const void *p, size_t n) {
	if (e->n + n > sizeof e->b) {
		fail("request too large");
	}
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void put_byte(enc *e, uint8_t c) { put(e, &c, 1); }

static void put_map(enc *e, uint8_t n) { put_byte(e, (uint8_t)(0x80 | n)); } /* n < 16 */

static void put_str(enc *e, const char *s) {
	size_t n = strlen(s);
	if (n > 255) {
		fail("string too long");
	}
	put_byte(e, 0xd9); /* str8 */
	put_byte(e, (uint8_t)n);
	put(e, s, n);
}

static void put_bin(enc *e, const void *p, size_t n) {
	if (n > 255) {
		fail("binary too long");
	}
	put_byte(e, 0xc4); /* bin8 */
	put_byte(e, (uint8_t)n);
	put(e, p, n);
}

/* ---- MessagePack decoding ---- */

enum { T_NIL, T_BOOL, T_INT, T_FLOAT, T_RAW, T_ARRAY, T_MAP };

typedef struct {
	const uint8_t *p;
	size_t n, i;
} dec;

typedef struct {
	int type;
	int b;              /* T_BOOL */
	long long i;        /* T_INT */
	const uint8_t *raw; /* T_RAW: a string or binary */
	size_t len;         /* T_RAW: its length; T_ARRAY, T_MAP: entries */
} value;

static uint64_t take(dec *d, size_t n) {
	uint64_t v = 0;
	if (d->n - d->i < n) {
		fail("reply truncated");
	}
	for (size_t k = 0; k < n; k++) {
		v = v << 8 | d->p[d->i++];
	}
	return v;
}

static void raw(dec *d, value *v, size_t n) {
	if (d->n - d->i < n) {
		fail("reply truncated");
	}
	v->type = T_RAW;
	v->raw = d->p + d->i;
	v->len = n;
	d->i += n;
}

/* next reads one value's head: a container's entries follow it. */
static void next(dec *d, value *v) {
	uint8_t c = (uint8_t)take(d, 1);
	memset(v, 0, sizeof *v);
	if (c <= 0x7f || c >= 0xe0) {
		v->type = T_INT;
		v->i = (int8_t)c;
		if (c <= 0x7f) {
			v->i = c;
		}
	} else if (c >= 0x80 && c <= 0x8f) {
		v->type = T_MAP;
		v->len = c & 0x0f;
	} else if (c >= 0x90 && c <= 0x9f) {
		v->type = T_ARRAY;
		v->len = c & 0x0f;
	} else if (c >= 0xa0 && c <= 0xbf) {
		raw(d, v, c & 0x1f);
	} else {
		switch (c) {
		case 0xc0: v->type = T_NIL; break;
		case 0xc2: case 0xc3: v->type = T_BOOL; v->b = c == 0xc3; break;
		case 0xc4: case 0xd9: raw(d, v, (size_t)take(d, 1)); break;
		case 0xc5: case 0xda: raw(d, v, (size_t)take(d, 2)); break;
		case 0xc6: case 0xdb: raw(d, v, (size_t)take(d, 4)); break;
		case 0xca: v->type = T_FLOAT; take(d, 4); break;
		case 0xcb: v->type = T_FLOAT; take(d, 8); break;
		case 0xcc: v->type = T_INT; v->i = (long long)take(d, 1); break;
		case 0xcd: v->type = T_INT; v->i = (long long)take(d, 2); break;
		case 0xce: v->type = T_INT; v->i = (long long)take(d, 4); break;
		case 0xcf: v->type = T_INT; v->i = (long long)take(d, 8); break;
		case 0xd0: v->type = T_INT; v->i = (int8_t)take(d, 1); break;
		case 0xd1: v->type = T_INT; v->i = (int16_t)take(d, 2); break;
		case 0xd2: v->type = T_INT; v->i = (int32_t)take(d, 4); break;
		case 0xd3: v->type = T_INT; v->i = (long long)take(d, 8); break;
		case 0xdc: v->type = T_ARRAY; v->len = (size_t)take(d, 2); break;
		case 0xdd: v->type = T_ARRAY; v->len = (size_t)take(d, 4); break;
		case 0xde: v->type = T_MAP; v->len = (size_t)take(d, 2); break;
		case 0xdf: v->type = T_MAP; v->len = (size_t)take(d, 4); break;
		default: fail("unexpected MessagePack byte 0x%02x", c);
		}
	}
}

/* skip reads the rest of a value whose head is v. */
static void skip(dec *d, const value *v) {
	size_t n = v->type == T_MAP ? 2 * v->len : v->type == T_ARRAY ? v->len : 0;
	for (size_t k = 0; k < n; k++) {
		value e;
		next(d, &e);
		skip(d, &e);
	}
}

static int is(const value *v, const char *s) {
	return v->type == T_RAW && v->len == strlen(s) && memcmp(v->raw, s, v->len) == 0;
}

static void copy_text(char *dst, size_t cap, const value *v) {
	size_t n = v->type == T_RAW ? v->len : 0;
	if (n >= cap) {
		n = cap - 1;
	}
	if (n > 0) {
		memcpy(dst, v->raw, n);
	}
	dst[n] = 0;
}

/* reply is what the smoke test reads of an /execute reply. */
typedef struct {
	int ok;
	char code[64], message[512], kind[64];
	int value_type; /* T_NIL, T_RAW, T_INT, ...; -1 when absent */
	uint8_t value[256];
	size_t value_len;
} reply;

static void parse(const uint8_t *p, size_t n, reply *r) {
	dec d = {p, n, 0};
	value top, k, v;
	memset(r, 0, sizeof *r);
	r->value_type = -1;
	next(&d, &top);
	if (top.type != T_MAP) {
		fail("reply is not a map");
	}
	for (size_t i = 0; i < top.len; i++) {
		next(&d, &k);
		next(&d, &v);
		if (!(is(&k, "status") || is(&k, "response")) || v.type != T_MAP) {
			skip(&d, &v);
			continue;
		}
		int status = is(&k, "status");
		size_t fields = v.len;
		for (size_t j = 0; j < fields; j++) {
			value fk, fv;
			next(&d, &fk);
			next(&d, &fv);
			if (status && is(&fk, "ok")) {
				r->ok = fv.type == T_BOOL && fv.b;
			} else if (status && is(&fk, "code")) {
				copy_text(r->code, sizeof r->code, &fv);
			} else if (status && is(&fk, "message")) {
				copy_text(r->message, sizeof r->message, &fv);
			} else if (!status && is(&fk, "kind")) {
				copy_text(r->kind, sizeof r->kind, &fv);
			} else if (!status && is(&fk, "value")) {
				r->value_type = fv.type;
				if (fv.type == T_RAW) {
					if (fv.len > sizeof r->value) {
						fail("value too long");
					}
					memcpy(r->value, fv.raw, fv.len);
					r->value_len = fv.len;
				}
			}
			skip(&d, &fv);
		}
	}
	if (d.i != d.n) {
		fail("%zu bytes after the reply", d.n - d.i);
	}
}

/* ---- commands ---- */

/* run sends req and parses the reply into r; it returns the result code. */
static int run(ts_handle h, const enc *req, reply *r) {
	uint8_t *resp = NULL;
	size_t len = 0;
	int rc = ts_execute(h, req->b, req->n, &resp, &len);
	if (resp == NULL) {
		fail("ts_execute returned %d and no reply", rc);
	}
	parse(resp, len, r);
	ts_free(resp);
	return rc;
}

static int set(ts_handle h, const char *kind, const char *key, const void *val, size_t n, reply *r) {
	enc e = {{0}, 0};
	put_map(&e, 1);
	put_str(&e, "command");
	put_map(&e, 3);
	put_str(&e, "kind");
	put_str(&e, kind);
	put_str(&e, "key");
	put_str(&e, key);
	put_str(&e, "value");
	put_bin(&e, val, n);
	return run(h, &e, r);
}

static int get(ts_handle h, const char *kind, const char *key, reply *r) {
	enc e = {{0}, 0};
	put_map(&e, 1);
	put_str(&e, "command");
	put_map(&e, 2);
	put_str(&e, "kind");
	put_str(&e, kind);
	put_str(&e, "key");
	put_str(&e, key);
	return run(h, &e, r);
}

static void expect_ok(const char *what, int rc, const reply *r) {
	if (rc != TS_OK || !r->ok || strcmp(r->code, "ok") != 0) {
		fail("%s: rc %d, status ok=%d code %s message %s", what, rc, r->ok, r->code, r->message);
	}
}

static void expect_value(const char *what, ts_handle h, const char *kind, const char *key, const void *want, size_t n) {
	reply r;
	expect_ok(what, get(h, kind, key, &r), &r);
	if (strcmp(r.kind, "bytes") != 0 || r.value_type != T_RAW || r.value_len != n || memcmp(r.value, want, n) != 0) {
		fail("%s: response kind %s, value type %d of %zu bytes, want %zu bytes", what, r.kind, r.value_type, r.value_len, n);
	}
}

static void expect_missing(const char *what, ts_handle h, const char *key) {
	reply r;
	expect_ok(what, get(h, "string_get", key, &r), &r);
	if (strcmp(r.kind, "bytes") != 0 || r.value_type != T_NIL) {
		fail("%s: response kind %s, value type %d, want bytes and nil", what, r.kind, r.value_type);
	}
}

static void expect_refused(const char *what, ts_handle h, const uint8_t *req, size_t n, int want_rc, const char *want_code) {
	enc e = {{0}, 0};
	reply r;
	put(&e, req, n);
	int rc = run(h, &e, &r);
	if (rc != want_rc || r.ok || strcmp(r.code, want_code) != 0 || r.message[0] == 0 || strcmp(r.kind, "empty") != 0) {
		fail("%s: rc %d (want %d), status ok=%d code %s (want %s) message %s, response %s", what, rc, want_rc, r.ok, r.code,
		     want_code, r.message, r.kind);
	}
}

static const char value_with_nul[] = {'h', 'e', 0, 'l', 'l', 'o'};

/* bad_requests sends requests the library must refuse. */
static void bad_requests(ts_handle h) {
	static const uint8_t reserved[] = {0xc1};
	static const uint8_t truncated[] = {0x81, 0xa7, 'c', 'o', 'm', 'm', 'a', 'n', 'd'};
	static const uint8_t no_command[] = {0x80};
	enc unknown = {{0}, 0};
	put_map(&unknown, 1);
	put_str(&unknown, "command");
	put_map(&unknown, 1);
	put_str(&unknown, "kind");
	put_str(&unknown, "no_such_kind");
	expect_refused("undecodable", h, reserved, sizeof reserved, TS_ERR_REQUEST, "bad_request");
	expect_refused("truncated", h, truncated, sizeof truncated, TS_ERR_REQUEST, "bad_request");
	expect_refused("no command", h, no_command, sizeof no_command, TS_ERR_REQUEST, "bad_request");
	expect_refused("unknown kind", h, unknown.b, unknown.n, TS_ERR_REQUEST, "bad_request");
}

static void *writer(void *arg) {
	ts_handle h = *(ts_handle *)arg;
	char key[32];
	snprintf(key, sizeof key, "thread:%p", (void *)pthread_self());
	for (int i = 0; i < 25; i++) {
		char val[16];
		reply r;
		int n = snprintf(val, sizeof val, "v%d", i);
		expect_ok("threaded set", set(h, "set", key, val, (size_t)n, &r), &r);
		expect_value("threaded get", h, "get", key, val, (size_t)n);
	}
	return NULL;
}

static void threads(ts_handle h) {
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		if (pthread_create(&t[i], NULL, writer, &h) != 0) {
			fail("pthread_create");
		}
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
	}
}

static ts_handle must_open(const char *dir) {
	char *err = NULL;
	ts_handle h = ts_open(dir, &err);
	if (h == 0) {
		fail("ts_open %s: %s", dir, err ? err : "(no message)");
	}
	return h;
}

static void expect_closed(ts_handle h) {
	static const uint8_t req[] = {0x80};
	uint8_t *resp = NULL;
	size_t len = 0;
	expect_refused("closed handle", h, req, sizeof req, TS_ERR_HANDLE, "bad_request");
	if (ts_close(h) != TS_ERR_HANDLE) {
		fail("ts_close of a closed handle did not answer TS_ERR_HANDLE");
	}
	if (ts_execute(h, req, sizeof req, NULL, &len) != TS_ERR_ARGUMENT || ts_execute(h, req, sizeof req, &resp, NULL) != TS_ERR_ARGUMENT) {
		fail("ts_execute with a NULL reply pointer did not answer TS_ERR_ARGUMENT");
	}
}

static void embedded(const char *dir) {
	reply r;
	char *err = NULL;
	ts_handle h = must_open(dir);

	expect_ok("string_set", set(h, "string_set", "greeting", value_with_nul, sizeof value_with_nul, &r), &r);
	if (strcmp(r.kind, "empty") != 0) {
		fail("string_set: response kind %s, want empty", r.kind);
	}
	expect_value("string_get", h, "string_get", "greeting", value_with_nul, sizeof value_with_nul);
	expect_value("get", h, "get", "greeting", value_with_nul, sizeof value_with_nul);
	expect_ok("set", set(h, "set", "engine-kind", "x", 1, &r), &r);
	expect_value("get of set", h, "get", "engine-kind", "x", 1);
	expect_missing("missing key", h, "absent");
	bad_requests(h);
	threads(h);

	if (ts_open(dir, &err) != 0 || err == NULL) {
		fail("a second ts_open of an open directory succeeded");
	}
	ts_free(err);
	err = NULL;
	if (ts_open(NULL, &err) != 0 || err == NULL) {
		fail("ts_open(NULL) succeeded");
	}
	ts_free(err);

	if (ts_close(h) != TS_OK) {
		fail("ts_close");
	}
	expect_closed(h);
	expect_closed(0);

	h = must_open(dir);
	expect_value("get after reopening", h, "string_get", "greeting", value_with_nul, sizeof value_with_nul);
	if (ts_close(h) != TS_OK) {
		fail("ts_close after reopening");
	}
	expect_closed(h);
}

static void connected(const char *url) {
	reply r;
	char *err = NULL;
	/* No token: the test's server takes none. */
	ts_handle h = ts_connect_token(url, NULL, &err);
	if (h == 0) {
		fail("ts_connect_token %s: %s", url, err ? err : "(no message)");
	}
	expect_ok("string_set", set(h, "string_set", "greeting", value_with_nul, sizeof value_with_nul, &r), &r);
	expect_value("string_get", h, "string_get", "greeting", value_with_nul, sizeof value_with_nul);
	expect_value("get", h, "get", "greeting", value_with_nul, sizeof value_with_nul);
	expect_missing("missing key", h, "absent");
	bad_requests(h);
	if (ts_close(h) != TS_OK) {
		fail("ts_close");
	}
	expect_closed(h);

	if (ts_connect("ftp://127.0.0.1", &err) != 0 || err == NULL) {
		fail("ts_connect of an ftp URL succeeded");
	}
	ts_free(err);

	/* Nothing listens on port 1: no reply at all. */
	h = ts_connect("http://127.0.0.1:1", NULL);
	if (h == 0) {
		fail("ts_connect http://127.0.0.1:1");
	}
	if (get(h, "get", "greeting", &r) != TS_ERR_REMOTE || r.ok || r.message[0] == 0) {
		fail("a read from a server that is down: status ok=%d code %s message %s", r.ok, r.code, r.message);
	}
	ts_close(h);
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: smoke embedded DIR | smoke connect URL\n");
		return 2;
	}
	if (strcmp(argv[1], "embedded") == 0) {
		embedded(argv[2]);
	} else if (strcmp(argv[1], "connect") == 0) {
		connected(argv[2]);
	} else {
		fail("unknown mode %s", argv[1]);
	}
	puts("ok");
	return 0;
}
