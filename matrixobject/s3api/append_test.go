package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// newTestServerOpts is newTestServer over a store opened with opts.
func newTestServerOpts(t *testing.T, opts matrixobject.Options) *testServer {
	t.Helper()
	st, err := matrixobject.Open(t.TempDir(), opts)
	require.NoError(t, err)
	h, err := New(st, Options{Credentials: map[string]string{testKey: testSecret}, Now: func() time.Time { return testNow }})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); st.Close() })
	require.NoError(t, st.CreateBucket(t.Context(), "bucket", matrixobject.Quota{}))
	return &testServer{Server: ts, store: st}
}

// blob returns the append blob bucket/key as the store holds it, nil when
// there is none.
func (ts *testServer) blob(t *testing.T, key string) []byte {
	t.Helper()
	n, err := ts.store.AppendBlobSize(t.Context(), "bucket", key)
	if err != nil {
		require.ErrorIs(t, err, matrixobject.ErrNoSuchKey)
		return nil
	}
	b := make([]byte, n)
	k, err := ts.store.ReadAppendBlob(t.Context(), "bucket", key, 0, b)
	require.NoError(t, err)
	return b[:k]
}

func offset(n int64) map[string]string {
	return map[string]string{"x-amz-write-offset-bytes": fmt.Sprint(n)}
}

// Appends follow S3 Express One Zone: the write offset must be the blob's
// size (0 creates it); anything refused leaves the blob as it was.
func TestAppendObject(t *testing.T) {
	ts := newTestServerOpts(t, matrixobject.Options{MaxAppendSize: 1024})
	_, err := ts.store.PutObject(t.Context(), "bucket", "plain", strings.NewReader("object"), matrixobject.PutOptions{})
	require.NoError(t, err)
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	md5b64 := func(b []byte) string { s := md5.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) }
	// The steps run in order on the key "log", each on what the ones
	// before left.
	for _, tc := range []struct {
		name    string
		key     string
		body    []byte
		hdr     map[string]string
		payload string
		status  int
		code    string
		want    string // the blob "log" afterwards
	}{
		{"create at 0", "log", []byte("hello"), offset(0), "", 200, "", "hello"},
		{"append at the size", "log", []byte(" world"), offset(5), "", 200, "", "hello world"},
		{"offset behind", "log", []byte("!"), offset(5), "", 400, "InvalidWriteOffset", "hello world"},
		{"offset 0 again", "log", []byte("!"), offset(0), "", 400, "InvalidWriteOffset", "hello world"},
		{"offset ahead", "log", []byte("!"), offset(12), "", 400, "InvalidWriteOffset", "hello world"},
		{"negative offset", "log", []byte("!"), map[string]string{"x-amz-write-offset-bytes": "-1"}, "", 400, "InvalidArgument", "hello world"},
		{"signed offset", "log", []byte("!"), map[string]string{"x-amz-write-offset-bytes": "+11"}, "", 400, "InvalidArgument", "hello world"},
		{"not a number", "log", []byte("!"), map[string]string{"x-amz-write-offset-bytes": "eleven"}, "", 400, "InvalidArgument", "hello world"},
		{"empty body", "log", nil, offset(11), "", 400, "InvalidRequest", "hello world"},
		{"metadata", "log", []byte("!"), with(offset(11), "x-amz-meta-color", "red"), "", 400, "InvalidRequest", "hello world"},
		{"sha256 mismatch", "log", []byte("!"), offset(11), hexSHA([]byte("?")), 400, "XAmzContentSHA256Mismatch", "hello world"},
		{"bad content-md5", "log", []byte("!"), with(offset(11), "Content-MD5", md5b64([]byte("?"))), "", 400, "BadDigest", "hello world"},
		{"malformed content-md5", "log", []byte("!"), with(offset(11), "Content-MD5", "nope"), "", 400, "InvalidDigest", "hello world"},
		{"bad crc32", "log", []byte("!"), with(offset(11), "x-amz-checksum-crc32", "AAAAAA=="), "", 400, "BadDigest", "hello world"},
		{"too large", "log", bytes.Repeat([]byte("x"), 1025), offset(11), "", 400, "EntityTooLarge", "hello world"},
		{"copy", "log", nil, with(offset(11), "x-amz-copy-source", "/bucket/plain"), "", 501, "NotImplemented", "hello world"},
		{"a regular object's key", "plain", []byte("!"), offset(6), "", 400, "InvalidRequest", "hello world"},
		{"good md5 and unsigned payload", "log", []byte("!"), with(offset(11), "Content-MD5", md5b64([]byte("!"))), unsignedPayload, 200, "", "hello world!"},
		{"at most the limit", "log", bytes.Repeat([]byte("x"), 1024), offset(12), "", 200, "", "hello world!" + strings.Repeat("x", 1024)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ts.do(t, "PUT", "/bucket/"+tc.key, tc.body, tc.hdr, tc.payload)
			require.Equal(t, tc.status, resp.StatusCode, string(b))
			if tc.code != "" {
				require.Equal(t, tc.code, errorCode(t, b).Code)
				require.Empty(t, resp.Header.Get("x-amz-object-size"))
			} else {
				size := fmt.Sprint(len(tc.want))
				require.Equal(t, size, resp.Header.Get("x-amz-object-size"))
				require.Equal(t, `"append-`+size+`"`, resp.Header.Get("ETag"))
			}
			require.Equal(t, tc.want, string(ts.blob(t, "log")))
			require.Nil(t, ts.blob(t, "plain"), "no blob beside the object")
			_, err := ts.store.HeadObject(t.Context(), "bucket", "log")
			require.ErrorIs(t, err, matrixobject.ErrNoSuchKey, "an append makes no object")
		})
	}

	resp, b := ts.do(t, "PUT", "/nobucket/log", []byte("x"), offset(0), "")
	require.Equal(t, 404, resp.StatusCode)
	require.Equal(t, "NoSuchBucket", errorCode(t, b).Code)
}

// An aws-chunked body with chunk signatures and a checksum trailer, as
// SDKs send, appends like any other; one that fails its checks appends
// nothing.
func TestAppendStreaming(t *testing.T) {
	ts := newTestServer(t)
	data := bytes.Repeat([]byte("chunk-"), 5000)
	amzDate := testNow.Format(amzDateFormat)
	scope := amzDate[:8] + "/us-east-1/s3/aws4_request"
	key := signingKey(testSecret, amzDate[:8], "us-east-1", "s3")
	send := func(off int64, corrupt bool) (*http.Response, []byte) {
		r, err := http.NewRequestWithContext(t.Context(), "PUT", ts.URL+"/bucket/stream", nil)
		require.NoError(t, err)
		r.Host = strings.TrimPrefix(ts.URL, "http://")
		r.Header.Set("Content-Encoding", "aws-chunked")
		r.Header.Set("x-amz-decoded-content-length", fmt.Sprint(len(data)))
		r.Header.Set("x-amz-write-offset-bytes", fmt.Sprint(off))
		seed := signV4(r, streamingSigned, testSecret, testNow)
		body := chunkedBody(data, 8192, key, amzDate, scope, seed, nil)
		if corrupt {
			body[300] ^= 1
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	resp, b := send(0, false)
	require.Equal(t, 200, resp.StatusCode, string(b))
	resp, b = send(int64(len(data)), true)
	require.Equal(t, 403, resp.StatusCode)
	require.Equal(t, "SignatureDoesNotMatch", errorCode(t, b).Code)
	require.Equal(t, data, ts.blob(t, "stream"))
	resp, b = send(int64(len(data)), false)
	require.Equal(t, 200, resp.StatusCode, string(b))
	require.Equal(t, append(bytes.Clone(data), data...), ts.blob(t, "stream"))
}

// Of writers racing to append at one offset, exactly one wins.
func TestAppendRace(t *testing.T) {
	ts := newTestServer(t)
	const writers, rounds = 6, 5
	var off int64
	for round := range rounds {
		status := make([]int, writers)
		bodies := make([][]byte, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				resp, b := ts.do(t, "PUT", "/bucket/race", fmt.Appendf(nil, "r%dw%d;", round, w), offset(off), "")
				status[w], bodies[w] = resp.StatusCode, b
			})
		}
		wg.Wait()
		var wins []int
		for w := range writers {
			if status[w] == 200 {
				wins = append(wins, w)
				continue
			}
			require.Equal(t, 400, status[w])
			require.Equal(t, "InvalidWriteOffset", errorCode(t, bodies[w]).Code)
		}
		require.Len(t, wins, 1, "round %d", round)
		want := fmt.Sprintf("r%dw%d;", round, wins[0])
		got := ts.blob(t, "race")
		require.Equal(t, want, string(got[off:]))
		off = int64(len(got))
	}
}

// GetObject and HeadObject serve an append blob when the key holds no
// object, with ranges as for objects.
func TestAppendBlobReads(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	// Several appends, so that reads cross the store's frames, and more
	// than one read chunk of the handler.
	var all []byte
	for i := range 5 {
		p := bytes.Repeat([]byte{byte('a' + i)}, 100_000+i)
		_, err := ts.store.Append(ctx, "bucket", "blob", p)
		require.NoError(t, err)
		all = append(all, p...)
	}
	size := int64(len(all))
	for _, tc := range []struct {
		name, rng    string
		status       int
		off, n       int64
		contentRange string
	}{
		{"whole", "", 200, 0, size, ""},
		{"first bytes", "bytes=0-4", 206, 0, 5, fmt.Sprintf("bytes 0-4/%d", size)},
		{"across frames", "bytes=99990-300020", 206, 99990, 200031, fmt.Sprintf("bytes 99990-300020/%d", size)},
		{"open end", "bytes=400000-", 206, 400000, size - 400000, fmt.Sprintf("bytes 400000-%d/%d", size-1, size)},
		{"suffix", "bytes=-7", 206, size - 7, 7, fmt.Sprintf("bytes %d-%d/%d", size-7, size-1, size)},
		{"end past the end", fmt.Sprintf("bytes=%d-%d", size-2, size+100), 206, size - 2, 2, fmt.Sprintf("bytes %d-%d/%d", size-2, size-1, size)},
		{"suffix past the start", fmt.Sprintf("bytes=-%d", size+5), 206, 0, size, fmt.Sprintf("bytes 0-%d/%d", size-1, size)},
		{"ignored syntax", "bytes=5-1", 200, 0, size, ""},
		{"start at the end", fmt.Sprintf("bytes=%d-", size), 416, 0, 0, fmt.Sprintf("bytes */%d", size)},
		{"-0", "bytes=-0", 416, 0, 0, fmt.Sprintf("bytes */%d", size)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr map[string]string
			if tc.rng != "" {
				hdr = map[string]string{"Range": tc.rng}
			}
			resp, b := ts.do(t, "GET", "/bucket/blob", nil, hdr, "")
			require.Equal(t, tc.status, resp.StatusCode, string(b))
			require.Equal(t, tc.contentRange, resp.Header.Get("Content-Range"))
			if tc.status == 416 {
				require.Equal(t, "InvalidRange", errorCode(t, b).Code)
				return
			}
			require.Equal(t, all[tc.off:tc.off+tc.n], b)
			require.Equal(t, fmt.Sprint(tc.n), resp.Header.Get("Content-Length"))
			require.Equal(t, fmt.Sprintf(`"append-%d"`, size), resp.Header.Get("ETag"))
			require.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))

			head, hb := ts.do(t, "HEAD", "/bucket/blob", nil, hdr, "")
			require.Equal(t, tc.status, head.StatusCode)
			require.Empty(t, hb)
			require.Equal(t, fmt.Sprint(tc.n), head.Header.Get("Content-Length"))
			require.Equal(t, tc.contentRange, head.Header.Get("Content-Range"))
		})
	}

	t.Run("an object wins", func(t *testing.T) {
		_, err := ts.store.Append(ctx, "bucket", "both", []byte("blob bytes"))
		require.NoError(t, err)
		_, err = ts.store.PutObject(ctx, "bucket", "both", strings.NewReader("object"), matrixobject.PutOptions{})
		require.NoError(t, err)
		resp, b := ts.do(t, "GET", "/bucket/both", nil, nil, "")
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "object", string(b))
		resp, _ = ts.do(t, "HEAD", "/bucket/both", nil, nil, "")
		require.Equal(t, "6", resp.Header.Get("Content-Length"))
	})

	t.Run("neither", func(t *testing.T) {
		resp, b := ts.do(t, "GET", "/bucket/none", nil, map[string]string{"Range": "bytes=0-1"}, "")
		require.Equal(t, 404, resp.StatusCode)
		require.Equal(t, "NoSuchKey", errorCode(t, b).Code)
		resp, _ = ts.do(t, "HEAD", "/bucket/none", nil, nil, "")
		require.Equal(t, 404, resp.StatusCode)
	})

	t.Run("what a PUT appended", func(t *testing.T) {
		resp, b := ts.do(t, "PUT", "/bucket/put", []byte("abc"), offset(0), "")
		require.Equal(t, 200, resp.StatusCode, string(b))
		etag := resp.Header.Get("ETag")
		resp, b = ts.do(t, "GET", "/bucket/put", nil, nil, "")
		require.Equal(t, "abc", string(b))
		require.Equal(t, etag, resp.Header.Get("ETag"))
		require.Equal(t, "binary/octet-stream", resp.Header.Get("Content-Type"))
	})
}

// DeleteObject and DeleteObjects remove a key's append blob with its
// object; a key with neither is no error.
func TestAppendBlobDelete(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for _, k := range []string{"a", "b", "c", "both"} {
		_, err := ts.store.Append(ctx, "bucket", k, []byte("bytes of "+k))
		require.NoError(t, err)
	}
	_, err := ts.store.PutObject(ctx, "bucket", "both", strings.NewReader("object"), matrixobject.PutOptions{})
	require.NoError(t, err)

	for _, k := range []string{"a", "a", "both"} {
		resp, b := ts.do(t, "DELETE", "/bucket/"+k, nil, nil, "")
		require.Equal(t, 204, resp.StatusCode, string(b))
		require.Nil(t, ts.blob(t, k))
		resp, _ = ts.do(t, "GET", "/bucket/"+k, nil, nil, "")
		require.Equal(t, 404, resp.StatusCode)
	}
	_, err = ts.store.HeadObject(ctx, "bucket", "both")
	require.ErrorIs(t, err, matrixobject.ErrNoSuchKey)

	// A deleted blob starts again at 0.
	resp, b := ts.do(t, "PUT", "/bucket/a", []byte("again"), offset(9), "")
	require.Equal(t, "InvalidWriteOffset", errorCode(t, b).Code, resp.Status)
	resp, b = ts.do(t, "PUT", "/bucket/a", []byte("again"), offset(0), "")
	require.Equal(t, 200, resp.StatusCode, string(b))

	del := []byte(`<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object><Object><Key>c</Key></Object></Delete>`)
	resp, b = ts.do(t, "POST", "/bucket?delete", del, map[string]string{"Content-MD5": func() string { s := md5.Sum(del); return base64.StdEncoding.EncodeToString(s[:]) }()}, "")
	require.Equal(t, 200, resp.StatusCode, string(b))
	require.NotContains(t, string(b), "<Error>")
	for _, k := range []string{"a", "b", "c"} {
		require.Nil(t, ts.blob(t, k))
	}
	resp, b = ts.do(t, "DELETE", "/bucket", nil, nil, "")
	require.Equal(t, 204, resp.StatusCode, "the bucket is empty: %s", b)
}
