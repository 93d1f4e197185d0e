package sharedlog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
	"github.com/temporalstore/temporalstore-go/matrixobject/s3api"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

const (
	s3Key    = "AKIDSHAREDLOG"
	s3Secret = "shared-log-secret"
)

// s3Server is matrixobject's S3 API over a fresh store, on a loopback port.
type s3Server struct {
	URL   string
	store *matrixobject.Store
}

// startS3 serves a new store with opts (credentials s3Key/s3Secret unless
// opts says otherwise) until the test ends.
func startS3(t *testing.T, opts s3api.Options) *s3Server {
	t.Helper()
	ob, err := matrixobject.Open(t.TempDir(), matrixobject.Options{})
	require.NoError(t, err)
	if opts.Credentials == nil && !opts.AllowAnonymous {
		opts.Credentials = map[string]string{s3Key: s3Secret}
	}
	h, err := s3api.New(ob, opts)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); ob.Close() })
	return &s3Server{URL: srv.URL, store: ob}
}

func newS3Store(t *testing.T, o sharedlog.S3Options) *sharedlog.S3Store {
	t.Helper()
	s, err := sharedlog.NewS3Store(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// s3Code returns the S3 error code and status err carries.
func s3Code(t *testing.T, err error) (string, int) {
	t.Helper()
	var e *sharedlog.S3Error
	require.True(t, errors.As(err, &e), "not an S3 answer: %v", err)
	return e.Code, e.Status
}

// The Store contract over HTTP, with signed and with anonymous requests.
func TestS3StoreConditions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		server      s3api.Options
		key, secret string
	}{
		{"signed", s3api.Options{}, s3Key, s3Secret},
		{"anonymous", s3api.Options{AllowAnonymous: true}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			srv := startS3(t, tc.server)
			s := newS3Store(t, sharedlog.S3Options{Endpoint: srv.URL, Bucket: "shared", AccessKey: tc.key, SecretKey: tc.secret})
			_, err := srv.store.HeadBucket(ctx, "shared")
			require.NoError(t, err, "the bucket is created")
			newS3Store(t, sharedlog.S3Options{Endpoint: srv.URL + "/", Bucket: "shared", AccessKey: tc.key, SecretKey: tc.secret}) // and found

			require.NoError(t, s.AppendAt(ctx, "a/b", 0, []byte("xy")))
			require.ErrorIs(t, s.AppendAt(ctx, "a/b", 0, []byte("z")), sharedlog.ErrConflict)
			require.ErrorIs(t, s.AppendAt(ctx, "a/b", 3, []byte("z")), sharedlog.ErrConflict)
			code, status := s3Code(t, s.AppendAt(ctx, "a/b", 1, []byte("z")))
			require.Equal(t, "InvalidWriteOffset", code)
			require.Equal(t, http.StatusBadRequest, status)
			require.NoError(t, s.AppendAt(ctx, "a/b", 2, []byte("z")))
			n, err := s.Size(ctx, "a/b")
			require.NoError(t, err)
			require.Equal(t, int64(3), n)

			// Empty appends check the condition only.
			require.NoError(t, s.AppendAt(ctx, "a/b", 3, nil))
			require.ErrorIs(t, s.AppendAt(ctx, "a/b", 2, nil), sharedlog.ErrConflict)
			require.NoError(t, s.AppendAt(ctx, "a/none", 0, nil))
			require.ErrorIs(t, s.AppendAt(ctx, "a/none", 1, nil), sharedlog.ErrConflict)
			_, err = s.Size(ctx, "a/none")
			require.ErrorIs(t, err, sharedlog.ErrNotExist)

			require.ErrorIs(t, s.Cut(ctx, "a/b", 1, 3), sharedlog.ErrUnsupported)

			// ReadAt reads like io.ReaderAt.
			for _, r := range []struct {
				off  int64
				size int
				want string
				eof  bool
			}{
				{0, 3, "xyz", false},
				{1, 2, "yz", false},
				{0, 1, "x", false},
				{0, 4, "xyz", true},
				{2, 10, "z", true},
				{3, 1, "", true},
				{100, 4, "", true},
				{1, 0, "", false},
			} {
				buf := make([]byte, r.size)
				k, err := s.ReadAt(ctx, "a/b", r.off, buf)
				require.Equal(t, r.want, string(buf[:k]), "%+v", r)
				if r.eof {
					require.ErrorIs(t, err, io.EOF, "%+v", r)
				} else {
					require.NoError(t, err, "%+v", r)
				}
			}
			_, err = s.ReadAt(ctx, "a/b", -1, make([]byte, 1))
			require.Error(t, err)

			_, err = s.ReadAt(ctx, "nope", 0, make([]byte, 4))
			require.ErrorIs(t, err, sharedlog.ErrNotExist)
			_, err = s.ReadAt(ctx, "nope", 0, nil)
			require.ErrorIs(t, err, sharedlog.ErrNotExist)
			_, err = s.Size(ctx, "nope")
			require.ErrorIs(t, err, sharedlog.ErrNotExist)
			_, err = s.Get(ctx, "nope")
			require.ErrorIs(t, err, sharedlog.ErrNotExist)
			code, status = s3Code(t, err)
			require.Equal(t, "NoSuchKey", code)
			require.Equal(t, http.StatusNotFound, status)

			require.NoError(t, s.Put(ctx, "o", []byte("v1")))
			require.NoError(t, s.Put(ctx, "o", []byte("v2")))
			v, err := s.Get(ctx, "o")
			require.NoError(t, err)
			require.Equal(t, "v2", string(v))
			require.NoError(t, s.Put(ctx, "empty", nil))
			v, err = s.Get(ctx, "empty")
			require.NoError(t, err)
			require.Empty(t, v)
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
			require.NoError(t, s.Put(ctx, "big", big))
			v, err = s.Get(ctx, "big")
			require.NoError(t, err)
			require.Equal(t, big, v)

			require.NoError(t, s.Delete(ctx, "o"))
			require.NoError(t, s.Delete(ctx, "o"))
			_, err = s.Get(ctx, "o")
			require.ErrorIs(t, err, sharedlog.ErrNotExist)
			require.NoError(t, s.Delete(ctx, "a/b"))
			_, err = s.Size(ctx, "a/b")
			require.ErrorIs(t, err, sharedlog.ErrNotExist, "Delete removes append blobs")
			require.NoError(t, s.AppendAt(ctx, "a/b", 0, []byte("again")), "and the name starts over")

			require.Error(t, s.Put(ctx, "../x", nil))
			require.Error(t, s.AppendAt(ctx, "/x", 0, []byte("x")))
			require.Error(t, s.Delete(ctx, ""))
		})
	}
}

// Members on an S3Store and one on the server's own store (ObjectStore)
// see the same blobs, and of several racing to append at one offset
// exactly one wins.
func TestS3StoreSharesBlobs(t *testing.T) {
	ctx := t.Context()
	srv := startS3(t, s3api.Options{})
	local, err := sharedlog.NewObjectStore(ctx, srv.store, "shared")
	require.NoError(t, err)
	stores := []sharedlog.Store{local}
	for range 4 {
		stores = append(stores, newS3Store(t, sharedlog.S3Options{Endpoint: srv.URL, Bucket: "shared", AccessKey: s3Key, SecretKey: s3Secret}))
	}
	var off int64
	for round := range 8 {
		errs := make([]error, len(stores))
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() { errs[i] = s.AppendAt(ctx, "seg", off, fmt.Appendf(nil, "<%d:%d>", round, i)) })
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "round %d: two winners", round)
				winner = i
				continue
			}
			require.ErrorIs(t, err, sharedlog.ErrConflict)
		}
		require.NotEqual(t, -1, winner, "round %d: no winner", round)
		want := fmt.Sprintf("<%d:%d>", round, winner)
		for _, s := range stores {
			n, err := s.Size(ctx, "seg")
			require.NoError(t, err)
			require.Equal(t, off+int64(len(want)), n)
			buf := make([]byte, len(want))
			_, err = s.ReadAt(ctx, "seg", off, buf)
			require.NoError(t, err)
			require.Equal(t, want, string(buf))
		}
		off += int64(len(want))
	}
}

// tamper is a transport that lets a test see, or change, each request
// after the store signed it.
type tamper struct {
	mut  func(r *http.Request)
	seen []*http.Request
}

func (tp *tamper) RoundTrip(r *http.Request) (*http.Response, error) {
	tp.seen = append(tp.seen, r)
	if tp.mut != nil {
		r = r.Clone(r.Context())
		tp.mut(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Requests are signed with AWS Signature Version 4: the server takes them
// with the right keys, and refuses wrong keys, a wrong region, a skewed
// clock, unsigned requests and requests changed after signing, with S3's
// codes.
func TestS3StoreSigV4(t *testing.T) {
	ctx := t.Context()
	srv := startS3(t, s3api.Options{})
	opts := sharedlog.S3Options{Endpoint: srv.URL, Bucket: "shared", AccessKey: s3Key, SecretKey: s3Secret}

	t.Run("refused", func(t *testing.T) {
		skewed := startS3(t, s3api.Options{Now: func() time.Time { return time.Now().Add(time.Hour) }})
		for _, tc := range []struct {
			name   string
			mut    func(o *sharedlog.S3Options)
			code   string
			status int
		}{
			{"unsigned", func(o *sharedlog.S3Options) { o.AccessKey, o.SecretKey = "", "" }, "AccessDenied", 403},
			{"wrong secret", func(o *sharedlog.S3Options) { o.SecretKey = "not-the-secret" }, "SignatureDoesNotMatch", 403},
			{"unknown key", func(o *sharedlog.S3Options) { o.AccessKey = "AKIDOTHER" }, "InvalidAccessKeyId", 403},
			{"wrong region", func(o *sharedlog.S3Options) { o.Region = "eu-west-1" }, "AuthorizationHeaderMalformed", 400},
			{"skewed clock", func(o *sharedlog.S3Options) { o.Endpoint = skewed.URL }, "RequestTimeTooSkewed", 403},
		} {
			t.Run(tc.name, func(t *testing.T) {
				o := opts
				tc.mut(&o)
				_, err := sharedlog.NewS3Store(ctx, o)
				code, status := s3Code(t, err)
				require.Equal(t, tc.code, code)
				require.Equal(t, tc.status, status)
				for _, st := range []*matrixobject.Store{srv.store, skewed.store} {
					_, err = st.HeadBucket(ctx, "shared")
					require.ErrorIs(t, err, matrixobject.ErrNoSuchBucket, "nothing was created")
				}
			})
		}
	})

	tp := &tamper{}
	o := opts
	o.Client = &http.Client{Transport: tp}
	s := newS3Store(t, o)

	t.Run("signed with the payload hash", func(t *testing.T) {
		tp.seen = nil
		body := []byte("payload")
		require.NoError(t, s.Put(ctx, "signed", body))
		_, err := s.Get(ctx, "signed")
		require.NoError(t, err)
		require.Len(t, tp.seen, 2)
		sum := sha256.Sum256(body)
		empty := sha256.Sum256(nil)
		for i, want := range []string{hex.EncodeToString(sum[:]), hex.EncodeToString(empty[:])} {
			r := tp.seen[i]
			require.Equal(t, want, r.Header.Get("X-Amz-Content-Sha256"))
			az := r.Header.Get("Authorization")
			require.True(t, strings.HasPrefix(az, "AWS4-HMAC-SHA256 Credential="+s3Key+"/"), az)
			require.Contains(t, az, "/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=")
		}
		tp.seen = nil
		require.NoError(t, s.AppendAt(ctx, "signed-blob", 0, body))
		require.Contains(t, tp.seen[0].Header.Get("Authorization"), "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-write-offset-bytes,")
	})

	t.Run("names that need escaping", func(t *testing.T) {
		for _, name := range []string{"with space/and+plus", "ünï/cödé", "odd/!$&'()*,;=:@[]", "pct/%41%2F%zz", "q/what?x=1#frag", "tilde~/under_score.dot-dash"} {
			require.NoError(t, s.Put(ctx, name, []byte(name)), name)
			v, err := s.Get(ctx, name)
			require.NoError(t, err, name)
			require.Equal(t, name, string(v))
			_, err = srv.store.HeadObject(ctx, "shared", name)
			require.NoError(t, err, "stored under its own name: %s", name)
			require.NoError(t, s.AppendAt(ctx, name+"/blob", 0, []byte("abc")), name)
			buf := make([]byte, 3)
			_, err = s.ReadAt(ctx, name+"/blob", 0, buf)
			require.NoError(t, err, name)
			n, err := s.Size(ctx, name+"/blob")
			require.NoError(t, err, name)
			require.Equal(t, int64(3), n)
			require.NoError(t, s.Delete(ctx, name))
			require.NoError(t, s.Delete(ctx, name+"/blob"))
			_, err = s.Size(ctx, name+"/blob")
			require.ErrorIs(t, err, sharedlog.ErrNotExist)
		}
	})

	t.Run("changed after signing", func(t *testing.T) {
		require.NoError(t, s.AppendAt(ctx, "seg", 0, []byte("base")))
		defer func() { tp.mut = nil }()
		for _, tc := range []struct {
			name   string
			mut    func(r *http.Request)
			code   string
			status int
		}{
			{"offset", func(r *http.Request) { r.Header.Set("X-Amz-Write-Offset-Bytes", "0") }, "SignatureDoesNotMatch", 403},
			{"path", func(r *http.Request) { r.URL.Path, r.URL.RawPath = "/shared/other", "" }, "SignatureDoesNotMatch", 403},
			{"signature", func(r *http.Request) {
				az := r.Header.Get("Authorization")
				last := "0"
				if strings.HasSuffix(az, "0") {
					last = "1"
				}
				r.Header.Set("Authorization", az[:len(az)-1]+last)
			}, "SignatureDoesNotMatch", 403},
			{"body", func(r *http.Request) {
				b, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				b[0] ^= 1
				r.Body = io.NopCloser(bytes.NewReader(b))
			}, "XAmzContentSHA256Mismatch", 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tp.mut = tc.mut
				err := s.AppendAt(ctx, "seg", 4, []byte("more"))
				tp.mut = nil
				require.NotErrorIs(t, err, sharedlog.ErrConflict)
				code, status := s3Code(t, err)
				require.Equal(t, tc.code, code)
				require.Equal(t, tc.status, status)
				n, err := s.Size(ctx, "seg")
				require.NoError(t, err)
				require.Equal(t, int64(4), n, "nothing appended")
				_, err = s.Size(ctx, "other")
				require.ErrorIs(t, err, sharedlog.ErrNotExist)
			})
		}
	})
}

func TestS3StoreOptions(t *testing.T) {
	ctx := t.Context()
	for _, o := range []sharedlog.S3Options{
		{Endpoint: "", Bucket: "b"},
		{Endpoint: "ftp://host", Bucket: "b"},
		{Endpoint: "http://", Bucket: "b"},
		{Endpoint: "http://host?x=1", Bucket: "b"},
		{Endpoint: "http://host", Bucket: ""},
		{Endpoint: "http://host", Bucket: "a/b"},
		{Endpoint: "http://host", Bucket: "b", AccessKey: "k"},
		{Endpoint: "http://host", Bucket: "b", SecretKey: "s"},
	} {
		_, err := sharedlog.NewS3Store(ctx, o)
		require.ErrorIs(t, err, sharedlog.ErrInvalidOptions, "%+v", o)
	}
	// An endpoint nothing listens on fails at once, without an S3 answer.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := sharedlog.NewS3Store(ctx, sharedlog.S3Options{Endpoint: url, Bucket: "b"})
	require.Error(t, err)
	var e *sharedlog.S3Error
	require.False(t, errors.As(err, &e))
}
