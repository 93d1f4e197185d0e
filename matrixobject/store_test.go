package matrixobject

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func openTest(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(p []byte) string {
	s := md5.Sum(p)
	return hex.EncodeToString(s[:])
}

func sha256hex(p []byte) string {
	s := sha256.Sum256(p)
	return hex.EncodeToString(s[:])
}

func readAll(t *testing.T, s *Store, bucket, key string, rng *Range) ([]byte, ObjectInfo) {
	t.Helper()
	r, err := s.GetObject(t.Context(), bucket, key, GetOptions{Range: rng})
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b, r.Info
}

func TestValidateBucketName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"abc", true},
		{"my-bucket.v2", true},
		{"a1b", true},
		{strings.Repeat("a", 63), true},
		{"ab", false},
		{strings.Repeat("a", 64), false},
		{"Upper", false},
		{"under_score", false},
		{"-abc", false},
		{"abc-", false},
		{".abc", false},
		{"a..b", false},
		{"192.168.5.4", false},
		{"xn--abc", false},
		{"sthree-abc", false},
		{"abc-s3alias", false},
		{"abc--ol-s3", false},
		{"a b", false},
		{"", false},
	} {
		err := ValidateBucketName(tc.name)
		if tc.ok {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorIs(t, err, ErrInvalidBucketName, tc.name)
		}
	}
}

func TestValidateKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"dir/sub/file.txt", true},
		{"trailing/", true},
		{"/leading", true},
		{"a..b", true},
		{"spaces and ünïcödé", true},
		{strings.Repeat("k", 1024), true},
		{"", false},
		{strings.Repeat("k", 1025), false},
		{"..", false},
		{"a/../b", false},
		{"../a", false},
		{"a/..", false},
		{"./a", false},
		{"a/./b", false},
		{"nul\x00byte", false},
		{"bad\xffutf8", false},
	} {
		err := ValidateKey(tc.key)
		if tc.ok {
			require.NoError(t, err, tc.key)
		} else {
			require.ErrorIs(t, err, ErrInvalidKey, tc.key)
		}
	}
}

func TestBuckets(t *testing.T) {
	s, dir := openTest(t, Options{})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "beta", Quota{}))
	require.NoError(t, s.CreateBucket(ctx, "alpha", Quota{MaxBytes: 10}))
	require.ErrorIs(t, s.CreateBucket(ctx, "alpha", Quota{}), ErrBucketExists)
	require.ErrorIs(t, s.CreateBucket(ctx, "Bad_Name", Quota{}), ErrInvalidBucketName)
	require.ErrorIs(t, s.CreateBucket(ctx, "gamma", Quota{MaxBytes: -1}), ErrInvalidArgument)

	bs, err := s.ListBuckets(ctx)
	require.NoError(t, err)
	require.Len(t, bs, 2)
	require.Equal(t, "alpha", bs[0].Name)
	require.Equal(t, int64(10), bs[0].Quota.MaxBytes)
	require.Equal(t, "beta", bs[1].Name)

	_, err = s.PutObject(ctx, "beta", "k", strings.NewReader("v"), PutOptions{})
	require.NoError(t, err)
	require.ErrorIs(t, s.DeleteBucket(ctx, "beta"), ErrBucketNotEmpty)
	require.ErrorIs(t, s.DeleteBucket(ctx, "nope"), ErrNoSuchBucket)
	require.NoError(t, s.DeleteObject(ctx, "beta", "k"))
	require.NoError(t, s.DeleteBucket(ctx, "beta"))
	_, err = s.HeadBucket(ctx, "beta")
	require.ErrorIs(t, err, ErrNoSuchBucket)

	// Buckets survive a reopen.
	require.NoError(t, s.Close())
	s2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s2.Close()
	bs, err = s2.ListBuckets(ctx)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	require.Equal(t, Quota{MaxBytes: 10}, bs[0].Quota)
}

func TestOpenLocksDirectory(t *testing.T) {
	s, dir := openTest(t, Options{})
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Close(), ErrClosed)
	_, err = s.ListBuckets(t.Context())
	require.ErrorIs(t, err, ErrClosed)
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{MaxPutSize: -1},
		{MinPartSize: 10, MaxPartSize: 5},
		{MaxParts: 100000},
		{UploadExpiry: -time.Second},
	} {
		_, err := Open(t.TempDir(), o)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
}

func TestPutGetHeadDelete(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s, dir := openTest(t, Options{Now: clock.Now})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{}))
	for _, size := range []int{0, 1, 4096, chunkSize - 1, chunkSize, 3*chunkSize + 17, flushEvery + writeStep + 17} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			data := randBytes(uint64(size), size)
			key := fmt.Sprintf("dir/obj-%d", size)
			info, err := s.PutObject(ctx, "bkt", key, bytes.NewReader(data), PutOptions{
				ContentType: "text/plain",
				Metadata:    map[string]string{"Color": "blue"},
			})
			require.NoError(t, err)
			require.Equal(t, int64(size), info.Size)
			require.Equal(t, md5hex(data), info.ETag)
			require.Equal(t, sha256hex(data), info.SHA256)
			got, gi := readAll(t, s, "bkt", key, nil)
			require.Equal(t, data, got)
			require.Equal(t, "text/plain", gi.ContentType)
			require.Equal(t, map[string]string{"color": "blue"}, gi.Metadata)
			require.Equal(t, clock.Now(), gi.ModTime)
			hi, err := s.HeadObject(ctx, "bkt", key)
			require.NoError(t, err)
			require.Equal(t, gi, hi)
		})
	}
	// Overwrite replaces content and metadata together.
	_, err := s.PutObject(ctx, "bkt", "dir/obj-1", strings.NewReader("new"), PutOptions{})
	require.NoError(t, err)
	got, gi := readAll(t, s, "bkt", "dir/obj-1", nil)
	require.Equal(t, "new", string(got))
	require.Empty(t, gi.Metadata)
	require.Empty(t, gi.ContentType)

	// A reader keeps its version while the key is replaced and deleted.
	r, err := s.GetObject(ctx, "bkt", "dir/obj-4096", GetOptions{})
	require.NoError(t, err)
	_, err = s.PutObject(ctx, "bkt", "dir/obj-4096", strings.NewReader("other"), PutOptions{})
	require.NoError(t, err)
	require.NoError(t, s.DeleteObject(ctx, "bkt", "dir/obj-4096"))
	old, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, randBytes(4096, 4096), old)
	require.NoError(t, r.Close())

	_, err = s.GetObject(ctx, "bkt", "dir/obj-4096", GetOptions{})
	require.ErrorIs(t, err, ErrNoSuchKey)
	require.ErrorIs(t, s.DeleteObject(ctx, "bkt", "dir/obj-4096"), ErrNoSuchKey)
	_, err = s.GetObject(ctx, "nobucket", "k", GetOptions{})
	require.ErrorIs(t, err, ErrNoSuchBucket)

	// Everything is there after a reopen, and tmp/ is empty.
	u, err := s.BucketUsage(ctx, "bkt")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s2.Close()
	u2, err := s2.BucketUsage(ctx, "bkt")
	require.NoError(t, err)
	require.Equal(t, u, u2)
	got, _ = readAll(t, s2, "bkt", "dir/obj-0", nil)
	require.Empty(t, got)
	got, _ = readAll(t, s2, "bkt", fmt.Sprintf("dir/obj-%d", 3*chunkSize+17), nil)
	require.Equal(t, randBytes(3*chunkSize+17, 3*chunkSize+17), got)
	ents, err := os.ReadDir(filepath.Join(dir, tmpDir))
	require.NoError(t, err)
	require.Empty(t, ents)
}

// errReader fails after n bytes.
type errReader struct {
	n   int
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func TestPutBadInputChangesNothing(t *testing.T) {
	s, dir := openTest(t, Options{MaxPutSize: 3 << 20})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{MaxBytes: 2 << 20}))
	_, err := s.PutObject(ctx, "bkt", "k", strings.NewReader("original"), PutOptions{Metadata: map[string]string{"v": "1"}})
	require.NoError(t, err)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		bucket string
		key    string
		body   io.Reader
		opts   PutOptions
		want   error
	}{
		{"bad bucket name", "B!", "k", strings.NewReader("x"), PutOptions{}, ErrInvalidBucketName},
		{"missing bucket", "nob", "k", strings.NewReader("x"), PutOptions{}, ErrNoSuchBucket},
		{"empty key", "bkt", "", strings.NewReader("x"), PutOptions{}, ErrInvalidKey},
		{"dotdot key", "bkt", "a/../k", strings.NewReader("x"), PutOptions{}, ErrInvalidKey},
		{"bad sha256", "bkt", "k", strings.NewReader("x"), PutOptions{ExpectedSHA256: sha256hex([]byte("y"))}, ErrBadDigest},
		{"malformed sha256", "bkt", "k", strings.NewReader("x"), PutOptions{ExpectedSHA256: "zz"}, ErrInvalidArgument},
		{"bad md5", "bkt", "k", strings.NewReader("x"), PutOptions{ExpectedMD5: make([]byte, 16)}, ErrBadDigest},
		{"too large", "bkt", "k", &errReader{n: 4 << 20, err: io.EOF}, PutOptions{}, ErrTooLarge},
		{"too large in memory", "bkt", "k", bytes.NewReader(make([]byte, 4<<20)), PutOptions{}, ErrTooLarge},
		{"quota in memory", "bkt", "k", bytes.NewReader(make([]byte, 2<<20+1)), PutOptions{}, ErrQuotaExceeded},
		{"bad md5 in memory", "bkt", "k", bytes.NewReader(make([]byte, 2<<20)), PutOptions{ExpectedMD5: make([]byte, 16)}, ErrBadDigest},
		{"quota", "bkt", "k", &errReader{n: 2<<20 + 1, err: io.EOF}, PutOptions{}, ErrQuotaExceeded},
		{"reader fails", "bkt", "k", &errReader{n: 2 << 20, err: boom}, PutOptions{}, boom},
		{"reader fails early", "bkt", "k", &errReader{n: 10, err: boom}, PutOptions{}, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.PutObject(ctx, tc.bucket, tc.key, tc.body, tc.opts)
			require.ErrorIs(t, err, tc.want)
			got, info := readAll(t, s, "bkt", "k", nil)
			require.Equal(t, "original", string(got))
			require.Equal(t, map[string]string{"v": "1"}, info.Metadata)
			ents, err := os.ReadDir(filepath.Join(dir, tmpDir))
			require.NoError(t, err)
			require.Empty(t, ents, "no temporary file is left behind")
		})
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.PutObject(ctx2, "bkt", "k", strings.NewReader("x"), PutOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestQuota(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "quo", Quota{MaxBytes: 10, MaxObjects: 2}))
	put := func(key, v string) error {
		_, err := s.PutObject(ctx, "quo", key, strings.NewReader(v), PutOptions{})
		return err
	}
	require.NoError(t, put("a", "12345"))
	require.NoError(t, put("b", "12345"))
	require.ErrorIs(t, put("c", ""), ErrQuotaExceeded, "object count")
	require.ErrorIs(t, put("a", "123456"), ErrQuotaExceeded, "bytes")
	got, _ := readAll(t, s, "quo", "a", nil)
	require.Equal(t, "12345", string(got), "quota failure leaves the old object")
	require.NoError(t, put("a", "1234"), "replacing with less fits")
	_, err := s.Append(ctx, "quo", "log", []byte("x"))
	require.ErrorIs(t, err, ErrQuotaExceeded, "an append blob counts as an object")
	require.NoError(t, s.SetQuota(ctx, "quo", Quota{MaxBytes: 12}))
	_, err = s.Append(ctx, "quo", "log", []byte("xyz"))
	require.NoError(t, err)
	_, err = s.Append(ctx, "quo", "log", []byte("x"))
	require.ErrorIs(t, err, ErrQuotaExceeded, "appended bytes count")
	u, err := s.BucketUsage(ctx, "quo")
	require.NoError(t, err)
	require.Equal(t, Usage{Bytes: 12, Objects: 3}, u)
}

func TestRanges(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{}))
	data := []byte("0123456789")
	_, err := s.PutObject(ctx, "bkt", "k", bytes.NewReader(data), PutOptions{})
	require.NoError(t, err)
	_, err = s.PutObject(ctx, "bkt", "empty", bytes.NewReader(nil), PutOptions{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		key  string
		r    Range
		want string
		err  error
	}{
		{"first byte", "k", Range{Start: 0, End: 0}, "0", nil},
		{"middle", "k", Range{Start: 2, End: 5}, "2345", nil},
		{"open end", "k", Range{Start: 7, End: -1}, "789", nil},
		{"end past object", "k", Range{Start: 8, End: 100}, "89", nil},
		{"suffix", "k", Range{Suffix: 3}, "789", nil},
		{"suffix longer than object", "k", Range{Suffix: 50}, "0123456789", nil},
		{"start at size", "k", Range{Start: 10, End: -1}, "", ErrInvalidRange},
		{"start past size", "k", Range{Start: 11, End: 20}, "", ErrInvalidRange},
		{"end before start", "k", Range{Start: 5, End: 4}, "", ErrInvalidRange},
		{"negative start", "k", Range{Start: -1, End: 4}, "", ErrInvalidRange},
		{"empty object", "empty", Range{Start: 0, End: -1}, "", ErrInvalidRange},
		{"empty object suffix", "empty", Range{Suffix: 1}, "", ErrInvalidRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.GetObject(ctx, "bkt", tc.key, GetOptions{Range: &tc.r})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			defer r.Close()
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			require.Equal(t, int64(len(tc.want)), r.Length)
		})
	}
}

func TestList(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{}))
	keys := []string{"a", "b/1", "b/2", "b/3/x", "c", "d/1", "d/2", "e"}
	for _, k := range keys {
		_, err := s.PutObject(ctx, "bkt", k, strings.NewReader(k), PutOptions{})
		require.NoError(t, err)
	}
	type page struct {
		keys     []string
		prefixes []string
	}
	// listAll pages through with maxKeys and returns each page.
	listAll := func(o ListOptions) []page {
		var pages []page
		for {
			res, err := s.ListObjects(ctx, "bkt", o)
			require.NoError(t, err)
			var p page
			for _, ob := range res.Objects {
				p.keys = append(p.keys, ob.Key)
			}
			p.prefixes = res.CommonPrefixes
			pages = append(pages, p)
			if !res.IsTruncated {
				return pages
			}
			require.NotEmpty(t, res.NextContinuationToken)
			o.ContinuationToken = res.NextContinuationToken
			require.Less(t, len(pages), 20)
		}
	}
	for _, tc := range []struct {
		name string
		o    ListOptions
		want []page
	}{
		{"all", ListOptions{}, []page{{keys: keys}}},
		{"prefix", ListOptions{Prefix: "b/"}, []page{{keys: []string{"b/1", "b/2", "b/3/x"}}}},
		{"delimiter", ListOptions{Delimiter: "/"}, []page{{keys: []string{"a", "c", "e"}, prefixes: []string{"b/", "d/"}}}},
		{"prefix and delimiter", ListOptions{Prefix: "b/", Delimiter: "/"}, []page{{keys: []string{"b/1", "b/2"}, prefixes: []string{"b/3/"}}}},
		{"start after", ListOptions{StartAfter: "b/2"}, []page{{keys: []string{"b/3/x", "c", "d/1", "d/2", "e"}}}},
		{"pages of 3", ListOptions{MaxKeys: 3}, []page{{keys: keys[0:3]}, {keys: keys[3:6]}, {keys: keys[6:8]}}},
		{"pages of 2 with delimiter", ListOptions{Delimiter: "/", MaxKeys: 2}, []page{
			{keys: []string{"a"}, prefixes: []string{"b/"}},
			{keys: []string{"c"}, prefixes: []string{"d/"}},
			{keys: []string{"e"}},
		}},
		{"pages of 1 with delimiter", ListOptions{Delimiter: "/", MaxKeys: 1}, []page{
			{keys: []string{"a"}}, {prefixes: []string{"b/"}}, {keys: []string{"c"}}, {prefixes: []string{"d/"}}, {keys: []string{"e"}},
		}},
		{"no match", ListOptions{Prefix: "zz"}, []page{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, listAll(tc.o))
		})
	}
	_, err := s.ListObjects(ctx, "bkt", ListOptions{ContinuationToken: "!!!"})
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = s.ListObjects(ctx, "zz-none", ListOptions{})
	require.ErrorIs(t, err, ErrNoSuchBucket)
}

// NoMD5 skips the MD5: the ETag is the SHA-256's first half, for objects
// and parts alike, and an expected MD5 is refused with it.
func TestNoMD5(t *testing.T) {
	s, _ := openTest(t, Options{MinPartSize: 1})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{}))
	data := randBytes(1, 3<<20)
	info, err := s.PutObject(ctx, "bkt", "k", bytes.NewReader(data), PutOptions{NoMD5: true})
	require.NoError(t, err)
	require.Equal(t, sha256hex(data), info.SHA256)
	require.Equal(t, sha256hex(data)[:32], info.ETag)
	_, err = s.PutObject(ctx, "bkt", "k", bytes.NewReader(data), PutOptions{NoMD5: true, ExpectedMD5: make([]byte, 16)})
	require.ErrorIs(t, err, ErrInvalidArgument)

	id, err := s.CreateMultipartUpload(ctx, "bkt", "m", PutOptions{})
	require.NoError(t, err)
	var done []CompletedPart
	for n, p := range [][]byte{data[:1<<20], data[1<<20:]} {
		pi, err := s.UploadPart(ctx, "bkt", "m", id, n+1, bytes.NewReader(p), PutOptions{NoMD5: true})
		require.NoError(t, err)
		require.Equal(t, sha256hex(p)[:32], pi.ETag)
		done = append(done, CompletedPart{PartNumber: n + 1, ETag: pi.ETag})
	}
	info, err = s.CompleteMultipartUpload(ctx, "bkt", "m", id, done)
	require.NoError(t, err)
	require.Equal(t, sha256hex(data), info.SHA256)
	got, _ := readAll(t, s, "bkt", "m", nil)
	require.Equal(t, data, got)
}

// A bucket whose empty directories were lost (a copy of files alone)
// opens, and takes objects again.
func TestOpenRemakesEmptyBucketDirs(t *testing.T) {
	s, dir := openTest(t, Options{})
	ctx := t.Context()
	require.NoError(t, s.CreateBucket(ctx, "bkt", Quota{}))
	require.NoError(t, s.Close())
	require.NoError(t, os.RemoveAll(filepath.Join(dir, bucketsDir, "bkt", appendDir)))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, bucketsDir, "bkt", objectsDir)))
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.PutObject(ctx, "bkt", "k", bytes.NewReader([]byte("v")), PutOptions{})
	require.NoError(t, err)
}
