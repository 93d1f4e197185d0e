package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/blob"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func blobServer(t *testing.T, edit func(*Options)) *httptest.Server {
	t.Helper()
	bs, err := blob.Open(t.TempDir(), blob.Options{MaxSize: 4 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { bs.Close() })
	srv, _, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.Blobs = bs
		if edit != nil {
			edit(o)
		}
	})
	return srv
}

// blobCall sends method url with body and headers (name, value pairs),
// and returns the status, the headers and the body.
func blobCall(t *testing.T, method, url string, body []byte, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

func sha(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 3))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func blobStatus(t *testing.T, body []byte) string {
	t.Helper()
	var s struct {
		Status Status `json:"status"`
		Code   string `json:"code"`
	}
	require.NoError(t, json.Unmarshal(body, &s), "%s", body)
	if s.Status.Code != "" {
		return s.Status.Code
	}
	return s.Code
}

func TestBlobPutGetSizesAndRanges(t *testing.T) {
	srv := blobServer(t, nil)
	for _, n := range []int{0, 1<<20 - 1, 1 << 20, 4 << 20} {
		b := randomBytes(n)
		code, _, body := blobCall(t, http.MethodPut, srv.URL+"/blob/big/one?namespace=ns", b, HeaderContentSHA256, sha(b))
		require.Equal(t, http.StatusOK, code, "%d: %s", n, body)
		code, hdr, got := blobCall(t, http.MethodGet, srv.URL+"/blob/big/one?namespace=ns", nil)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, b, got, n)
		require.Equal(t, sha(b), hdr.Get(HeaderContentSHA256))
	}
	code, _, body := blobCall(t, http.MethodPut, srv.URL+"/blob/over", make([]byte, 4<<20+1))
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Equal(t, CodeTooLarge, blobStatus(t, body))

	b := randomBytes(1000)
	code, _, _ = blobCall(t, http.MethodPost, srv.URL+"/blob/r", b)
	require.Equal(t, http.StatusOK, code)
	for _, tc := range []struct {
		rng       string
		code      int
		want      []byte
		contRange string
	}{
		{"bytes=0-0", http.StatusPartialContent, b[:1], "bytes 0-0/1000"},
		{"bytes=999-", http.StatusPartialContent, b[999:], "bytes 999-999/1000"},
		{"bytes=-10", http.StatusPartialContent, b[990:], "bytes 990-999/1000"},
		{"bytes=500-5000", http.StatusPartialContent, b[500:], "bytes 500-999/1000"},
		{"bytes=-5000", http.StatusPartialContent, b, "bytes 0-999/1000"},
		{"bytes=1000-", http.StatusRequestedRangeNotSatisfiable, nil, "bytes */1000"},
		{"bytes=-0", http.StatusRequestedRangeNotSatisfiable, nil, "bytes */1000"},
		{"bytes=0-1,5-6", http.StatusOK, b, ""},
		{"bytes=9-1", http.StatusOK, b, ""},
		{"pages=1-2", http.StatusOK, b, ""},
	} {
		code, hdr, got := blobCall(t, http.MethodGet, srv.URL+"/blob/r", nil, "Range", tc.rng)
		require.Equal(t, tc.code, code, tc.rng)
		require.Equal(t, tc.contRange, hdr.Get("Content-Range"), tc.rng)
		if tc.want != nil {
			require.Equal(t, tc.want, got, tc.rng)
		}
	}
	code, hdr, got := blobCall(t, http.MethodHead, srv.URL+"/blob/r", nil)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, got)
	require.Equal(t, "1000", hdr.Get("Content-Length"))
}

func TestBlobBadInputChangesNothing(t *testing.T) {
	srv := blobServer(t, nil)
	code, _, _ := blobCall(t, http.MethodPut, srv.URL+"/blob/k", []byte("old"))
	require.Equal(t, http.StatusOK, code)
	for _, tc := range []struct {
		name, method, path string
		hdr                []string
		code               int
		status             string
	}{
		{"wrong digest", http.MethodPut, "/blob/k", []string{HeaderContentSHA256, sha([]byte("other"))}, http.StatusBadRequest, CodeBadDigest},
		{"malformed digest", http.MethodPut, "/blob/k", []string{HeaderContentSHA256, "zz"}, http.StatusBadRequest, "invalid_argument"},
		{"no such upload", http.MethodPut, "/blob/k?upload_id=0123456789abcdef0123456789abcdef&part=1", nil, http.StatusNotFound, CodeNoSuchUpload},
		{"bad part number", http.MethodPut, "/blob/k?upload_id=x&part=one", nil, http.StatusBadRequest, CodeBadRequest},
		{"method", http.MethodPatch, "/blob/k", nil, http.StatusMethodNotAllowed, CodeBadRequest},
		{"missing", http.MethodGet, "/blob/none", nil, http.StatusNotFound, CodeNotFound},
		{"delete missing", http.MethodDelete, "/blob/none", nil, http.StatusNotFound, CodeNotFound},
		{"bad limit", http.MethodGet, "/blob?limit=-1", nil, http.StatusBadRequest, CodeBadRequest},
	} {
		code, _, body := blobCall(t, tc.method, srv.URL+tc.path, []byte("new"), tc.hdr...)
		require.Equal(t, tc.code, code, "%s: %s", tc.name, body)
		require.Equal(t, tc.status, blobStatus(t, body), tc.name)
		_, _, got := blobCall(t, http.MethodGet, srv.URL+"/blob/k", nil)
		require.Equal(t, "old", string(got), tc.name)
	}
}

func TestBlobMultipartListDeleteSweep(t *testing.T) {
	srv := blobServer(t, nil)
	code, _, body := blobCall(t, http.MethodPost, srv.URL+"/blob/doc?uploads&namespace=ns", nil)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var begun struct {
		UploadID string `json:"upload_id"`
	}
	require.NoError(t, json.Unmarshal(body, &begun))
	up := srv.URL + "/blob/doc?namespace=ns&upload_id=" + begun.UploadID
	parts := [][]byte{randomBytes(5000), randomBytes(17), randomBytes(300000)}
	// Out of order, the second part first sent with other content.
	code, _, _ = blobCall(t, http.MethodPut, up+"&part=2", []byte("stale"))
	require.Equal(t, http.StatusOK, code)
	for _, i := range []int{2, 0, 1} {
		code, _, body := blobCall(t, http.MethodPut, up+"&part="+string(rune('1'+i)), parts[i], HeaderContentSHA256, sha(parts[i]))
		require.Equal(t, http.StatusOK, code, "%s", body)
	}
	code, _, body = blobCall(t, http.MethodGet, up, nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"part":3`)
	code, _, _ = blobCall(t, http.MethodGet, srv.URL+"/blob/doc?namespace=ns", nil)
	require.Equal(t, http.StatusNotFound, code, "nothing is visible before the commit")
	code, _, body = blobCall(t, http.MethodPost, up, []byte(`{"parts":[1,7]}`))
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, CodeNoSuchPart, blobStatus(t, body))
	code, _, body = blobCall(t, http.MethodPost, up, nil)
	require.Equal(t, http.StatusOK, code, "%s", body)
	want := bytes.Join(parts, nil)
	require.Contains(t, string(body), sha(want))
	_, _, got := blobCall(t, http.MethodGet, srv.URL+"/blob/doc?namespace=ns", nil)
	require.Equal(t, want, got)
	code, _, body = blobCall(t, http.MethodPost, up, nil)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, CodeNoSuchUpload, blobStatus(t, body))

	// An aborted upload.
	_, _, body = blobCall(t, http.MethodPost, srv.URL+"/blob/gone?uploads&namespace=ns", nil)
	require.NoError(t, json.Unmarshal(body, &begun))
	code, _, _ = blobCall(t, http.MethodDelete, srv.URL+"/blob/gone?namespace=ns&upload_id="+begun.UploadID, nil)
	require.Equal(t, http.StatusOK, code)

	for _, k := range []string{"a/1", "a/2", "b/1"} {
		code, _, _ := blobCall(t, http.MethodPut, srv.URL+"/blob/"+k+"?namespace=ns", []byte(k))
		require.Equal(t, http.StatusOK, code)
	}
	var list struct {
		Blobs []blob.Info `json:"blobs"`
		Next  string      `json:"next"`
	}
	_, _, body = blobCall(t, http.MethodGet, srv.URL+"/blob?namespace=ns&prefix=a/&limit=1", nil)
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.Blobs, 1)
	require.Equal(t, "a/1", list.Blobs[0].Key)
	_, _, body = blobCall(t, http.MethodGet, srv.URL+"/blob?namespace=ns&prefix=a/&after="+list.Next, nil)
	require.NoError(t, json.Unmarshal(body, &list))
	require.Equal(t, "a/2", list.Blobs[0].Key)
	require.Empty(t, list.Next)
	code, _, _ = blobCall(t, http.MethodDelete, srv.URL+"/blob/a/1?namespace=ns", nil)
	require.Equal(t, http.StatusOK, code)
	_, _, body = blobCall(t, http.MethodGet, srv.URL+"/blob/?namespace=ns", nil)
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.Blobs, 3)
	code, _, body = blobCall(t, http.MethodPost, srv.URL+"/blob?sweep", nil)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Contains(t, string(body), `"sweep":{"uploads":0`)
}

func TestBlobTokens(t *testing.T) {
	srv := blobServer(t, func(o *Options) {
		o.ReadWriteTokens, o.ReadOnlyTokens = []string{"rw"}, []string{"ro"}
		o.TenantTokens = map[string]TenantToken{"acme-rw": {Tenant: "acme"}, "acme-ro": {Tenant: "acme", ReadOnly: true}}
	})
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	code, _, _ := blobCall(t, http.MethodPut, srv.URL+"/blob/k", []byte("x"))
	require.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = blobCall(t, http.MethodPut, srv.URL+"/blob/k", []byte("x"), bearer("ro")...)
	require.Equal(t, http.StatusForbidden, code)
	code, _, _ = blobCall(t, http.MethodPut, srv.URL+"/blob/k", []byte("x"), bearer("rw")...)
	require.Equal(t, http.StatusOK, code)
	code, _, _ = blobCall(t, http.MethodGet, srv.URL+"/blob/k", nil, bearer("ro")...)
	require.Equal(t, http.StatusOK, code)

	// A tenant's token reaches its own namespace only, by default.
	code, _, _ = blobCall(t, http.MethodPut, srv.URL+"/blob/k", []byte("tenant's"), bearer("acme-rw")...)
	require.Equal(t, http.StatusOK, code)
	_, _, got := blobCall(t, http.MethodGet, srv.URL+"/blob/k?namespace=acme", nil, bearer("rw")...)
	require.Equal(t, "tenant's", string(got))
	code, _, _ = blobCall(t, http.MethodGet, srv.URL+"/blob/k?namespace=default", nil, bearer("acme-rw")...)
	require.Equal(t, http.StatusForbidden, code)
	code, _, _ = blobCall(t, http.MethodDelete, srv.URL+"/blob/k", nil, bearer("acme-ro")...)
	require.Equal(t, http.StatusForbidden, code)
	_, _, got = blobCall(t, http.MethodGet, srv.URL+"/blob/k", nil, bearer("acme-ro")...)
	require.Equal(t, "tenant's", string(got))
	require.False(t, strings.Contains(string(got), "x"))
}
