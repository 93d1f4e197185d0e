package s3api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

const (
	testKey    = "AKIDTEST"
	testSecret = "secret-for-tests"
)

var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

type testServer struct {
	*httptest.Server
	store *matrixobject.Store
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	return newTestServerOpts(t, matrixobject.Options{MinPartSize: 1})
}

// signV4 signs r with the test credentials as an SDK would, for the given
// payload hash, and returns the seed signature.
func signV4(r *http.Request, payload, secret string, at time.Time) string {
	amzDate := at.UTC().Format(amzDateFormat)
	r.Header.Set("X-Amz-Date", amzDate)
	r.Header.Set("X-Amz-Content-Sha256", payload)
	signed := []string{"host", "x-amz-content-sha256", "x-amz-date"}
	for k := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") && lk != "x-amz-date" && lk != "x-amz-content-sha256" {
			signed = append(signed, lk)
		}
	}
	sortStrings(signed)
	a := authHeader{AccessKey: testKey, Date: amzDate[:8], Region: "us-east-1", Service: "s3"}
	key := signingKey(secret, a.Date, a.Region, a.Service)
	sig := sign(key, stringToSign(amzDate, a.scope(), canonicalRequest(r, signed, payload, "")))
	r.Header.Set("Authorization", fmt.Sprintf("%s Credential=%s/%s, SignedHeaders=%s, Signature=%s", algorithm, testKey, a.scope(), strings.Join(signed, ";"), sig))
	return sig
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func hexSHA(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// do sends a request signed with payload hash payload (empty: the SHA-256
// of body) and returns the response and its body.
func (ts *testServer) do(t *testing.T, method, path string, body []byte, hdr map[string]string, payload string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	r.Host = strings.TrimPrefix(ts.URL, "http://")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	if payload == "" {
		payload = hexSHA(body)
	}
	signV4(r, payload, testSecret, testNow)
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, b
}

func errorCode(t *testing.T, b []byte) errorXML {
	t.Helper()
	var e errorXML
	require.NoError(t, xml.Unmarshal(b, &e), string(b))
	return e
}

func TestErrorDocument(t *testing.T) {
	ts := newTestServer(t)
	resp, b := ts.do(t, "GET", "/bucket/missing", nil, nil, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
	e := errorCode(t, b)
	require.Equal(t, "NoSuchKey", e.Code)
	require.Equal(t, "/bucket/missing", e.Resource)
	require.NotEmpty(t, e.Message)
	require.Equal(t, resp.Header.Get("x-amz-request-id"), e.RequestID)
	require.True(t, strings.HasPrefix(string(b), "<?xml"))
}

func TestStatusCodes(t *testing.T) {
	ts := newTestServer(t)
	_, err := ts.store.PutObject(t.Context(), "bucket", "k", strings.NewReader("0123456789"), matrixobject.PutOptions{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		hdr                map[string]string
		payload            string
		status             int
		code               string
	}{
		{"no such bucket", "GET", "/nobucket?list-type=2", nil, nil, "", 404, "NoSuchBucket"},
		{"bucket not empty", "DELETE", "/bucket", nil, nil, "", 409, "BucketNotEmpty"},
		{"bucket exists", "PUT", "/bucket", nil, nil, "", 409, "BucketAlreadyOwnedByYou"},
		{"bad bucket name", "PUT", "/Bad_Name", nil, nil, "", 400, "InvalidBucketName"},
		{"range unsatisfiable", "GET", "/bucket/k", nil, map[string]string{"Range": "bytes=10-"}, "", 416, "InvalidRange"},
		{"range -0", "GET", "/bucket/k", nil, map[string]string{"Range": "bytes=-0"}, "", 416, "InvalidRange"},
		{"no such upload", "DELETE", "/bucket/k?uploadId=00000000000000000000000000000000", nil, nil, "", 404, "NoSuchUpload"},
		{"bad part number", "PUT", "/bucket/k?partNumber=0&uploadId=x", []byte("x"), nil, "", 400, "InvalidArgument"},
		{"sha256 mismatch", "PUT", "/bucket/k", []byte("new"), nil, hexSHA([]byte("other")), 400, "XAmzContentSHA256Mismatch"},
		{"bad content-md5", "PUT", "/bucket/k", []byte("new"), map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, "", 400, "BadDigest"},
		{"bad crc32", "PUT", "/bucket/k", []byte("new"), map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}, "", 400, "BadDigest"},
		{"bad key", "PUT", "/bucket/a/../b", []byte("new"), nil, "", 400, "InvalidArgument"},
		{"malformed complete", "POST", "/bucket/k?uploadId=00000000000000000000000000000000", []byte("<nope"), nil, "", 400, "MalformedXML"},
		{"bad max-keys", "GET", "/bucket?list-type=2&max-keys=x", nil, nil, "", 400, "InvalidArgument"},
		{"bad token", "GET", "/bucket?list-type=2&continuation-token=%21%21", nil, nil, "", 400, "InvalidArgument"},
		{"copy not implemented", "PUT", "/bucket/k2", nil, map[string]string{"x-amz-copy-source": "/bucket/k"}, "", 501, "NotImplemented"},
		{"acl not implemented", "GET", "/bucket?acl", nil, nil, "", 501, "NotImplemented"},
		{"bad payload mode", "PUT", "/bucket/k", []byte("new"), nil, "NOPE", 400, "InvalidArgument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ts.do(t, tc.method, tc.path, tc.body, tc.hdr, tc.payload)
			require.Equal(t, tc.status, resp.StatusCode, string(b))
			require.Equal(t, tc.code, errorCode(t, b).Code)
			if tc.code == "InvalidRange" {
				require.Equal(t, "bytes */10", resp.Header.Get("Content-Range"))
			}
			r, err := ts.store.GetObject(t.Context(), "bucket", "k", matrixobject.GetOptions{})
			require.NoError(t, err)
			got, _ := io.ReadAll(r)
			r.Close()
			require.Equal(t, "0123456789", string(got), "a refused request changes nothing")
		})
	}
}

func TestAuthFailures(t *testing.T) {
	ts := newTestServer(t)
	send := func(mut func(r *http.Request)) (int, string) {
		r, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/bucket?list-type=2", nil)
		require.NoError(t, err)
		mut(r)
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, errorCode(t, b).Code
	}
	for _, tc := range []struct {
		name   string
		mut    func(r *http.Request)
		status int
		code   string
	}{
		{"anonymous", func(r *http.Request) {}, 403, "AccessDenied"},
		{"wrong secret", func(r *http.Request) { signV4(r, emptySHA256, "wrong", testNow) }, 403, "SignatureDoesNotMatch"},
		{"tampered query", func(r *http.Request) {
			signV4(r, emptySHA256, testSecret, testNow)
			r.URL.RawQuery += "&prefix=x"
		}, 403, "SignatureDoesNotMatch"},
		{"unknown key", func(r *http.Request) {
			signV4(r, emptySHA256, testSecret, testNow)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), testKey, "AKIDOTHER", 1))
		}, 403, "InvalidAccessKeyId"},
		{"clock skew", func(r *http.Request) { signV4(r, emptySHA256, testSecret, testNow.Add(-time.Hour)) }, 403, "RequestTimeTooSkewed"},
		{"wrong region", func(r *http.Request) {
			signV4(r, emptySHA256, testSecret, testNow)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "us-east-1", "eu-west-1", 1))
		}, 400, "AuthorizationHeaderMalformed"},
		{"malformed", func(r *http.Request) {
			signV4(r, emptySHA256, testSecret, testNow)
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 garbage")
		}, 400, "AuthorizationHeaderMalformed"},
		{"missing content sha", func(r *http.Request) {
			signV4(r, emptySHA256, testSecret, testNow)
			r.Header.Del("X-Amz-Content-Sha256")
		}, 400, "InvalidRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code := send(tc.mut)
			require.Equal(t, tc.status, status)
			require.Equal(t, tc.code, code)
		})
	}
}

// chunkedBody encodes data as aws-chunked with chunk signatures (seed, when
// not empty) and an optional trailer.
func chunkedBody(data []byte, chunk int, key []byte, amzDate, scope, seed string, trailer map[string]string) []byte {
	var b bytes.Buffer
	prev := seed
	emit := func(p []byte) {
		if seed == "" {
			fmt.Fprintf(&b, "%x\r\n", len(p))
		} else {
			sig := sign(key, chunkStringToSign(amzDate, scope, prev, hexSHA(p)))
			fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", len(p), sig)
			prev = sig
		}
		if len(p) > 0 {
			b.Write(p)
			b.WriteString("\r\n")
		}
	}
	for len(data) > 0 {
		n := min(chunk, len(data))
		emit(data[:n])
		data = data[n:]
	}
	emit(nil)
	if trailer != nil {
		var canon strings.Builder
		for k, v := range trailer {
			fmt.Fprintf(&b, "%s:%s\r\n", k, v)
			canon.WriteString(k + ":" + v + "\n")
		}
		if seed != "" {
			fmt.Fprintf(&b, "x-amz-trailer-signature:%s\r\n", sign(key, trailerStringToSign(amzDate, scope, prev, sha256Hex(canon.String()))))
		}
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

func TestStreamingUploads(t *testing.T) {
	ts := newTestServer(t)
	data := bytes.Repeat([]byte("streaming-payload-"), 5000) // 90,000 bytes
	crc := crc32.ChecksumIEEE(data)
	crcB64 := base64.StdEncoding.EncodeToString([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	amzDate := testNow.Format(amzDateFormat)
	scope := amzDate[:8] + "/us-east-1/s3/aws4_request"
	key := signingKey(testSecret, amzDate[:8], "us-east-1", "s3")
	for _, tc := range []struct {
		name    string
		mode    string
		trailer map[string]string
		corrupt func(b []byte)
		code    string
	}{
		{"signed chunks", streamingSigned, nil, nil, ""},
		{"signed chunks with trailer", streamingSignedTrailer, map[string]string{"x-amz-checksum-crc32": crcB64}, nil, ""},
		{"unsigned with trailer", streamingUnsignedTrailer, map[string]string{"x-amz-checksum-crc32": crcB64}, nil, ""},
		{"bad chunk data", streamingSigned, nil, func(b []byte) { b[200] ^= 1 }, "SignatureDoesNotMatch"},
		{"bad trailer checksum", streamingUnsignedTrailer, map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}, nil, "BadDigest"},
		{"bad trailer signature", streamingSignedTrailer, map[string]string{"x-amz-checksum-crc32": crcB64}, func(b []byte) {
			i := bytes.Index(b, []byte("x-amz-trailer-signature:")) + len("x-amz-trailer-signature:")
			b[i] ^= 1
		}, "SignatureDoesNotMatch"},
		{"truncated", streamingSigned, nil, func(b []byte) { copy(b[len(b)-120:], bytes.Repeat([]byte("z"), 120)) }, "IncompleteBody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objKey := "stream-" + strings.ReplaceAll(tc.name, " ", "-")
			r, err := http.NewRequestWithContext(t.Context(), "PUT", ts.URL+"/bucket/"+objKey, nil)
			require.NoError(t, err)
			r.Host = strings.TrimPrefix(ts.URL, "http://")
			r.Header.Set("Content-Encoding", "aws-chunked")
			r.Header.Set("x-amz-decoded-content-length", fmt.Sprint(len(data)))
			if tc.trailer != nil {
				r.Header.Set("x-amz-trailer", "x-amz-checksum-crc32")
			}
			seed := signV4(r, tc.mode, testSecret, testNow)
			if tc.mode == streamingUnsignedTrailer {
				seed = ""
			}
			body := chunkedBody(data, 8192, key, amzDate, scope, seed, tc.trailer)
			if tc.corrupt != nil {
				tc.corrupt(body)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			resp, err := http.DefaultClient.Do(r)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			_, gerr := ts.store.HeadObject(context.Background(), "bucket", objKey)
			if tc.code == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
				obj, err := ts.store.GetObject(t.Context(), "bucket", objKey, matrixobject.GetOptions{})
				require.NoError(t, err)
				got, _ := io.ReadAll(obj)
				obj.Close()
				require.Equal(t, data, got)
				return
			}
			require.Equal(t, tc.code, errorCode(t, b).Code)
			require.ErrorIs(t, gerr, matrixobject.ErrNoSuchKey, "a rejected body is not stored")
		})
	}
}

func TestPresigned(t *testing.T) {
	ts := newTestServer(t)
	_, err := ts.store.PutObject(t.Context(), "bucket", "p", strings.NewReader("presigned"), matrixobject.PutOptions{})
	require.NoError(t, err)
	presign := func(at time.Time, expires int, secret string) string {
		amzDate := at.Format(amzDateFormat)
		scope := amzDate[:8] + "/us-east-1/s3/aws4_request"
		q := url.Values{}
		q.Set("X-Amz-Algorithm", algorithm)
		q.Set("X-Amz-Credential", testKey+"/"+scope)
		q.Set("X-Amz-Date", amzDate)
		q.Set("X-Amz-Expires", fmt.Sprint(expires))
		q.Set("X-Amz-SignedHeaders", "host")
		r := httptest.NewRequest("GET", "/bucket/p?"+q.Encode(), nil)
		r.Host = strings.TrimPrefix(ts.URL, "http://")
		key := signingKey(secret, amzDate[:8], "us-east-1", "s3")
		sig := sign(key, stringToSign(amzDate, scope, canonicalRequest(r, []string{"host"}, unsignedPayload, "X-Amz-Signature")))
		return ts.URL + "/bucket/p?" + q.Encode() + "&X-Amz-Signature=" + sig
	}
	get := func(u string) int {
		resp, err := http.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, 200, get(presign(testNow, 60, testSecret)))
	require.Equal(t, 403, get(presign(testNow, 60, "wrong")))
	require.Equal(t, 403, get(presign(testNow.Add(-2*time.Minute), 60, testSecret)), "expired")
}
