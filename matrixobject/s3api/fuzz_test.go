package s3api

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the committed fuzz seed corpora under testdata/fuzz")

// corpus writes seeds as the committed corpus of a fuzz target when
// -write-corpus is given, and adds them to f either way. Each seed is the
// list of the target's arguments.
func corpus(f *testing.F, seeds ...[]any) {
	f.Helper()
	for _, s := range seeds {
		f.Add(s...)
	}
	if !*writeCorpus {
		return
	}
	dir := filepath.Join("testdata", "fuzz", f.Name())
	require.NoError(f, os.RemoveAll(dir))
	require.NoError(f, os.MkdirAll(dir, 0o755))
	for i, s := range seeds {
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, a := range s {
			switch v := a.(type) {
			case string:
				fmt.Fprintf(&b, "string(%q)\n", v)
			case []byte:
				fmt.Fprintf(&b, "[]byte(%q)\n", v)
			case bool:
				fmt.Fprintf(&b, "bool(%v)\n", v)
			default:
				f.Fatalf("seed type %T", a)
			}
		}
		require.NoError(f, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(b.String()), 0o644))
	}
}

func FuzzParseRange(f *testing.F) {
	corpus(f,
		[]any{"bytes=0-0"}, []any{"bytes=100-"}, []any{"bytes=-500"}, []any{"bytes=-0"},
		[]any{"bytes=5-4"}, []any{"bytes=0-1,3-4"}, []any{"items=0-1"}, []any{"bytes=99999999999999999999-"},
		[]any{" bytes = 1 - 2 "}, []any{"bytes=-"}, []any{""},
	)
	f.Fuzz(func(t *testing.T, h string) {
		r, kind := matrixobject.ParseRangeHeader(h)
		switch kind {
		case matrixobject.RangeOne:
			if r.Suffix > 0 {
				require.Zero(t, r.Start)
				return
			}
			require.GreaterOrEqual(t, r.Start, int64(0))
			require.True(t, r.End == -1 || r.End >= r.Start, "%+v", r)
		case matrixobject.RangeNone, matrixobject.RangeUnsatisfiable:
			require.Equal(t, matrixobject.Range{}, r)
		}
	})
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		h    string
		r    matrixobject.Range
		kind matrixobject.RangeKind
	}{
		{"bytes=0-0", matrixobject.Range{Start: 0, End: 0}, matrixobject.RangeOne},
		{"bytes=10-", matrixobject.Range{Start: 10, End: -1}, matrixobject.RangeOne},
		{"bytes=-5", matrixobject.Range{Suffix: 5}, matrixobject.RangeOne},
		{"BYTES=1-2", matrixobject.Range{Start: 1, End: 2}, matrixobject.RangeOne},
		{"bytes=-0", matrixobject.Range{}, matrixobject.RangeUnsatisfiable},
		{"bytes=5-4", matrixobject.Range{}, matrixobject.RangeNone},
		{"bytes=0-1,5-6", matrixobject.Range{}, matrixobject.RangeNone},
		{"bytes=a-b", matrixobject.Range{}, matrixobject.RangeNone},
		{"bytes=+1-2", matrixobject.Range{}, matrixobject.RangeNone},
		{"lines=1-2", matrixobject.Range{}, matrixobject.RangeNone},
		{"", matrixobject.Range{}, matrixobject.RangeNone},
	} {
		r, kind := matrixobject.ParseRangeHeader(tc.h)
		require.Equal(t, tc.kind, kind, tc.h)
		require.Equal(t, tc.r, r, tc.h)
	}
}

func FuzzRoute(f *testing.F) {
	corpus(f,
		[]any{"GET", "/", ""}, []any{"PUT", "/bucket", ""}, []any{"GET", "/bucket", "list-type=2&prefix=a%2F&delimiter=%2F"},
		[]any{"PUT", "/bucket/key/with/slashes", "partNumber=1&uploadId=abc"}, []any{"POST", "/bucket/k", "uploads"},
		[]any{"POST", "/bucket/k", "uploadId=abc"}, []any{"DELETE", "/bucket/k", "uploadId=abc"}, []any{"GET", "/bucket", "acl"},
		[]any{"PATCH", "/bucket/k", ""}, []any{"POST", "/bucket", "delete"}, []any{"GET", "//", "list-type=3"},
	)
	f.Fuzz(func(t *testing.T, method, path, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		o, bucket, key, aerr := route(method, path, q)
		if aerr != nil {
			require.NotEmpty(t, aerr.Code)
			require.GreaterOrEqual(t, aerr.Status, 400)
			return
		}
		require.NotEqual(t, opUnknown, o)
		require.NotContains(t, bucket, "/")
		if key != "" {
			require.Equal(t, strings.TrimPrefix(path, "/"), bucket+"/"+key)
		}
	})
}

func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		method, path, query string
		op                  op
		bucket, key         string
		code                string
	}{
		{"GET", "/", "", opListBuckets, "", "", ""},
		{"PUT", "/b", "", opCreateBucket, "b", "", ""},
		{"DELETE", "/b", "", opDeleteBucket, "b", "", ""},
		{"HEAD", "/b", "", opHeadBucket, "b", "", ""},
		{"GET", "/b", "location", opGetBucketLocation, "b", "", ""},
		{"GET", "/b", "", opListObjectsV1, "b", "", ""},
		{"GET", "/b", "list-type=2", opListObjectsV2, "b", "", ""},
		{"GET", "/b", "uploads", opListMultipartUploads, "b", "", ""},
		{"POST", "/b", "delete", opDeleteObjects, "b", "", ""},
		{"PUT", "/b/k/x", "", opPutObject, "b", "k/x", ""},
		{"GET", "/b/k", "", opGetObject, "b", "k", ""},
		{"HEAD", "/b/k", "", opHeadObject, "b", "k", ""},
		{"DELETE", "/b/k", "", opDeleteObject, "b", "k", ""},
		{"POST", "/b/k", "uploads", opCreateMultipartUpload, "b", "k", ""},
		{"PUT", "/b/k", "partNumber=2&uploadId=u", opUploadPart, "b", "k", ""},
		{"POST", "/b/k", "uploadId=u", opCompleteMultipartUpload, "b", "k", ""},
		{"DELETE", "/b/k", "uploadId=u", opAbortMultipartUpload, "b", "k", ""},
		{"GET", "/b/k", "uploadId=u", opListParts, "b", "k", ""},
		{"PUT", "/b/k", "uploadId=u", opUnknown, "b", "k", "InvalidArgument"},
		{"GET", "/b", "list-type=1", opUnknown, "b", "", "InvalidArgument"},
		{"GET", "/b", "versioning", opUnknown, "b", "", "NotImplemented"},
		{"GET", "/b/k", "tagging", opUnknown, "b", "k", "NotImplemented"},
		{"PATCH", "/b/k", "", opUnknown, "b", "k", "MethodNotAllowed"},
		{"PUT", "/", "", opUnknown, "", "", "MethodNotAllowed"},
	} {
		q, _ := url.ParseQuery(tc.query)
		o, b, k, aerr := route(tc.method, tc.path, q)
		require.Equal(t, tc.op, o, "%s %s?%s", tc.method, tc.path, tc.query)
		require.Equal(t, tc.bucket, b)
		require.Equal(t, tc.key, k)
		if tc.code == "" {
			require.Nil(t, aerr)
		} else {
			require.Equal(t, tc.code, aerr.Code)
		}
	}
}

func FuzzListQuery(f *testing.F) {
	corpus(f,
		[]any{"list-type=2"}, []any{"list-type=2&prefix=a%2Fb&delimiter=%2F&max-keys=10"},
		[]any{"list-type=2&continuation-token=YS9i&start-after=a"}, []any{"max-keys=-1"}, []any{"max-keys=99999999999999999999"},
		[]any{"encoding-type=url"}, []any{"encoding-type=base64"}, []any{"continuation-token=%%%"},
	)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		for _, v2 := range []bool{false, true} {
			o, maxKeys, enc, aerr := listQuery(q, v2)
			if aerr != nil {
				require.Equal(t, "InvalidArgument", aerr.Code)
				continue
			}
			require.True(t, maxKeys >= 0 && maxKeys <= matrixobject.MaxListKeys)
			require.True(t, enc == "" || enc == "url")
			if o.ContinuationToken != "" {
				_, err := matrixobject.DecodeContinuationToken(o.ContinuationToken)
				require.NoError(t, err)
			}
		}
	})
}

func FuzzCompleteBody(f *testing.F) {
	corpus(f,
		[]any{[]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"a"</ETag></Part></CompleteMultipartUpload>`)},
		[]any{[]byte(`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><ETag>"x"</ETag><PartNumber>2</PartNumber><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part></CompleteMultipartUpload>`)},
		[]any{[]byte(`<CompleteMultipartUpload></CompleteMultipartUpload>`)},
		[]any{[]byte(`<CompleteMultipartUpload><Part><PartNumber>-1</PartNumber><ETag>x</ETag></Part>`)},
		[]any{[]byte(`<Other/>`)}, []any{[]byte(``)}, []any{[]byte(`<!DOCTYPE x [<!ENTITY a "b">]><CompleteMultipartUpload/>`)},
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		parts, aerr := parseCompleteBody(body)
		if aerr != nil {
			require.Equal(t, "MalformedXML", aerr.Code)
			return
		}
		require.NotEmpty(t, parts)
		for _, p := range parts {
			require.GreaterOrEqual(t, p.PartNumber, 1)
			require.NotEmpty(t, p.ETag)
		}
	})
}

func FuzzParseAuthorization(f *testing.F) {
	good := "AWS4-HMAC-SHA256 Credential=AKID/20260102/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + strings.Repeat("ab", 32)
	corpus(f,
		[]any{good}, []any{strings.Replace(good, ", ", ",", -1)}, []any{"AWS4-HMAC-SHA256 Credential=AKID/2026/us-east-1/s3/aws4_request"},
		[]any{"AWS AKID:signature"}, []any{strings.Replace(good, "host;", "Host;", 1)}, []any{strings.Replace(good, "host;", "", 1)},
		[]any{"AWS4-HMAC-SHA256 Credential=a/b/c/d/e/f, SignedHeaders=host, Signature=00"}, []any{""},
	)
	f.Fuzz(func(t *testing.T, h string) {
		a, aerr := parseAuthorization(h)
		if aerr != nil {
			require.Equal(t, "AuthorizationHeaderMalformed", aerr.Code)
			return
		}
		require.True(t, isHex(a.Signature, 64))
		require.Contains(t, a.SignedHeaders, "host")
		require.Len(t, a.Date, 8)
		require.NotEmpty(t, a.AccessKey)
		require.NotContains(t, a.AccessKey, "/")
	})
}

func FuzzChunked(f *testing.F) {
	key := signingKey(testSecret, "20260304", "us-east-1", "s3")
	amzDate := "20260304T050607Z"
	scope := "20260304/us-east-1/s3/aws4_request"
	seed := strings.Repeat("cd", 32)
	data := []byte("hello aws-chunked world, more than one chunk of data")
	corpus(f,
		[]any{chunkedBody(data, 16, key, amzDate, scope, seed, nil), true},
		[]any{chunkedBody(data, 16, key, amzDate, scope, "", map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}), false},
		[]any{chunkedBody(data, 1000, key, amzDate, scope, seed, map[string]string{"x-amz-checksum-sha256": "x"}), true},
		[]any{[]byte("5\r\nhello\r\n0\r\n\r\n"), false},
		[]any{[]byte("ffffffffffffffff\r\n"), false},
		[]any{[]byte("3;chunk-signature=zz\r\nabc\r\n"), true},
		[]any{[]byte("0\r\nx-amz-checksum-crc32\r\n\r\n"), false},
		[]any{[]byte(""), false},
	)
	f.Fuzz(func(t *testing.T, body []byte, signed bool) {
		var sig *signer
		if signed {
			sig = &signer{key: key, amzDate: amzDate, scope: scope, seed: seed}
		}
		for _, want := range []int64{-1, int64(len(data))} {
			c := newChunkedReader(bytes.NewReader(body), sig, true, want)
			out, err := io.ReadAll(io.LimitReader(c, int64(len(body))+1))
			require.LessOrEqual(t, len(out), len(body), "decoding never grows the body")
			if err == nil && want >= 0 {
				require.Equal(t, want, int64(len(out)))
			}
		}
	})
}

// TestChunkedRoundTrip checks the decoder against the encoder for several
// chunk sizes.
func TestChunkedRoundTrip(t *testing.T) {
	key := signingKey(testSecret, "20260304", "us-east-1", "s3")
	amzDate, scope, seed := "20260304T050607Z", "20260304/us-east-1/s3/aws4_request", strings.Repeat("cd", 32)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	for _, chunk := range []int{1, 7, 8192, 20000} {
		for _, signed := range []bool{false, true} {
			s := seed
			var sig *signer
			if signed {
				sig = &signer{key: key, amzDate: amzDate, scope: scope, seed: seed}
			} else {
				s = ""
			}
			c := newChunkedReader(bytes.NewReader(chunkedBody(data, chunk, key, amzDate, scope, s, map[string]string{"x-amz-checksum-crc32": "x"})), sig, true, int64(len(data)))
			got, err := io.ReadAll(c)
			require.NoError(t, err, "chunk %d signed %v", chunk, signed)
			require.Equal(t, data, got)
			v, ok := c.Trailer("x-amz-checksum-crc32")
			require.True(t, ok)
			require.Equal(t, "x", v)
		}
	}
}
