package s3compat

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

const (
	testAccessKey = "AKIAMATRIXOBJECT01"
	testSecret    = "matrixobject-secret-key-for-tests"
)

func newClient(t *testing.T, url, secret string) *s3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(t.Context(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(testAccessKey, secret, "")),
	)
	require.NoError(t, err)
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(url)
		o.UsePathStyle = true
		o.Logger = logging.Nop{} // quiet "Response has no supported checksum"
	})
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// apiCode returns the S3 error code and HTTP status of err.
func apiCode(t *testing.T, err error) (string, int) {
	t.Helper()
	require.Error(t, err)
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae), "not an API error: %v", err)
	status := 0
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return ae.ErrorCode(), status
}

func TestAWSSDK(t *testing.T) {
	srv, err := StartServer(t.TempDir(), matrixobject.Options{}, map[string]string{testAccessKey: testSecret})
	require.NoError(t, err)
	defer srv.Close()
	c := newClient(t, srv.URL, testSecret)
	ctx := t.Context()

	// Buckets.
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sdk-bucket")})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sdk-bucket")})
	code, status := apiCode(t, err)
	require.Equal(t, "BucketAlreadyOwnedByYou", code)
	require.Equal(t, http.StatusConflict, status)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("Bad_Bucket")})
	code, status = apiCode(t, err)
	require.Equal(t, "InvalidBucketName", code)
	require.Equal(t, http.StatusBadRequest, status)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sdk-other")})
	require.NoError(t, err)
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	require.NoError(t, err)
	require.Len(t, lb.Buckets, 2)
	require.Equal(t, "sdk-bucket", *lb.Buckets[0].Name)
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("sdk-bucket")})
	require.NoError(t, err)

	// PutObject / GetObject / HeadObject with metadata and content type.
	small := []byte("hello, matrixobject")
	put, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt"), Body: bytes.NewReader(small),
		ContentType: aws.String("text/plain"), Metadata: map[string]string{"owner": "sdk"},
	})
	require.NoError(t, err)
	require.Equal(t, `"`+md5hex(small)+`"`, *put.ETag)
	big := randBytes(1, 3<<20+123)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/big.bin"), Body: bytes.NewReader(big)})
	require.NoError(t, err)
	odd := "odd key/with spaces+plus&amp=eq?q#hash/ünï"
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String(odd), Body: strings.NewReader("odd")})
	require.NoError(t, err)

	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt")})
	require.NoError(t, err)
	body, err := io.ReadAll(get.Body)
	require.NoError(t, err)
	get.Body.Close()
	require.Equal(t, small, body)
	require.Equal(t, "text/plain", *get.ContentType)
	require.Equal(t, map[string]string{"owner": "sdk"}, get.Metadata)
	require.Equal(t, `"`+md5hex(small)+`"`, *get.ETag)

	get, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String(odd)})
	require.NoError(t, err)
	body, _ = io.ReadAll(get.Body)
	get.Body.Close()
	require.Equal(t, "odd", string(body))

	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/big.bin")})
	require.NoError(t, err)
	require.Equal(t, int64(len(big)), *head.ContentLength)
	require.Equal(t, `"`+md5hex(big)+`"`, *head.ETag)

	// Range reads.
	for _, tc := range []struct {
		rng       string
		from, to  int // inclusive
		wantRange string
	}{
		{"bytes=0-0", 0, 0, fmt.Sprintf("bytes 0-0/%d", len(big))},
		{"bytes=100-2000000", 100, 2000000, fmt.Sprintf("bytes 100-2000000/%d", len(big))},
		{"bytes=3145000-", 3145000, len(big) - 1, fmt.Sprintf("bytes 3145000-%d/%d", len(big)-1, len(big))},
		{"bytes=-500", len(big) - 500, len(big) - 1, fmt.Sprintf("bytes %d-%d/%d", len(big)-500, len(big)-1, len(big))},
	} {
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/big.bin"), Range: aws.String(tc.rng)})
		require.NoError(t, err, tc.rng)
		b, err := io.ReadAll(g.Body)
		require.NoError(t, err)
		g.Body.Close()
		require.Equal(t, big[tc.from:tc.to+1], b, tc.rng)
		require.Equal(t, tc.wantRange, *g.ContentRange, tc.rng)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt"), Range: aws.String("bytes=100-200")})
	code, status = apiCode(t, err)
	require.Equal(t, "InvalidRange", code)
	require.Equal(t, http.StatusRequestedRangeNotSatisfiable, status)

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("missing")})
	code, status = apiCode(t, err)
	require.Equal(t, "NoSuchKey", code)
	require.Equal(t, http.StatusNotFound, status)
	var nsk *types.NoSuchKey
	require.ErrorAs(t, err, &nsk)
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("no-such-bucket"), Key: aws.String("k")})
	code, status = apiCode(t, err)
	require.Equal(t, "NoSuchBucket", code)
	require.Equal(t, http.StatusNotFound, status)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("missing")})
	_, status = apiCode(t, err)
	require.Equal(t, http.StatusNotFound, status)

	// ListObjectsV2: prefix, delimiter, pagination, start-after.
	for i := range 7 {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String(fmt.Sprintf("list/%02d", i)), Body: strings.NewReader("x")})
		require.NoError(t, err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("list/sub/a"), Body: strings.NewReader("x")})
	require.NoError(t, err)
	var keys []string
	pages := 0
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("sdk-bucket"), Prefix: aws.String("list/"), MaxKeys: aws.Int32(3)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		require.NoError(t, err)
		pages++
		for _, o := range page.Contents {
			keys = append(keys, *o.Key)
		}
	}
	require.Equal(t, 3, pages)
	require.Equal(t, []string{"list/00", "list/01", "list/02", "list/03", "list/04", "list/05", "list/06", "list/sub/a"}, keys)
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("sdk-bucket"), Delimiter: aws.String("/")})
	require.NoError(t, err)
	require.Empty(t, lo.Contents, "every key holds the delimiter")
	var cps []string
	for _, cp := range lo.CommonPrefixes {
		cps = append(cps, *cp.Prefix)
	}
	require.Equal(t, []string{"dir/", "list/", "odd key/"}, cps)
	lo, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("sdk-bucket"), Prefix: aws.String("list/"), StartAfter: aws.String("list/04"), Delimiter: aws.String("/")})
	require.NoError(t, err)
	require.Len(t, lo.Contents, 2)
	require.Equal(t, "list/sub/", *lo.CommonPrefixes[0].Prefix)
	require.Equal(t, int32(3), *lo.KeyCount)

	// Multipart: three parts, 5 MiB, 5 MiB, and a short last one.
	const mib = 1 << 20
	parts := [][]byte{randBytes(11, 5*mib), randBytes(12, 5*mib), randBytes(13, 1234)}
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), ContentType: aws.String("application/x-test")})
	require.NoError(t, err)
	var done []types.CompletedPart
	var md5s []byte
	for i, part := range parts {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(part)})
		require.NoError(t, err)
		require.Equal(t, `"`+md5hex(part)+`"`, *up.ETag)
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
		s := md5.Sum(part)
		md5s = append(md5s, s[:]...)
	}
	// Wrong order and wrong ETag are refused, and the upload stays open.
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{done[1], done[0], done[2]}}})
	code, status = apiCode(t, err)
	require.Equal(t, "InvalidPartOrder", code)
	require.Equal(t, http.StatusBadRequest, status)
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{done[0], {PartNumber: aws.Int32(2), ETag: done[0].ETag}, done[2]}}})
	code, _ = apiCode(t, err)
	require.Equal(t, "InvalidPart", code)
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), UploadId: cu.UploadId})
	require.NoError(t, err)
	require.Len(t, lp.Parts, 3)
	cm, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	require.NoError(t, err)
	s := md5.Sum(md5s)
	require.Equal(t, `"`+hex.EncodeToString(s[:])+`-3"`, *cm.ETag)
	whole := bytes.Join(parts, nil)
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object"), Range: aws.String(fmt.Sprintf("bytes=%d-%d", 5*mib-10, 5*mib+9))})
	require.NoError(t, err)
	b, _ := io.ReadAll(g.Body)
	g.Body.Close()
	require.Equal(t, whole[5*mib-10:5*mib+10], b, "a range across the part boundary")
	require.Equal(t, *cm.ETag, *g.ETag)
	g, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/object")})
	require.NoError(t, err)
	b, _ = io.ReadAll(g.Body)
	g.Body.Close()
	require.True(t, bytes.Equal(whole, b))
	require.Equal(t, "application/x-test", *g.ContentType)

	// S3's 5 MiB minimum for a part that is not the last.
	cu2, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/small")})
	require.NoError(t, err)
	var done2 []types.CompletedPart
	for i := range 2 {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/small"), UploadId: cu2.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(randBytes(uint64(i), 1024))})
		require.NoError(t, err)
		done2 = append(done2, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/small"), UploadId: cu2.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done2}})
	code, status = apiCode(t, err)
	require.Equal(t, "EntityTooSmall", code)
	require.Equal(t, http.StatusBadRequest, status)
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/small"), UploadId: cu2.UploadId})
	require.NoError(t, err)
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("mp/small"), UploadId: cu2.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("x")})
	code, status = apiCode(t, err)
	require.Equal(t, "NoSuchUpload", code)
	require.Equal(t, http.StatusNotFound, status)

	// A request signed with the wrong secret.
	bad := newClient(t, srv.URL, "not-the-secret")
	_, err = bad.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt")})
	code, status = apiCode(t, err)
	require.Equal(t, "SignatureDoesNotMatch", code)
	require.Equal(t, http.StatusForbidden, status)
	_, err = bad.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt"), Body: strings.NewReader("overwrite")})
	code, _ = apiCode(t, err)
	require.Equal(t, "SignatureDoesNotMatch", code)
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIAUNKNOWN", testSecret, "")))
	require.NoError(t, err)
	unknown := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(srv.URL); o.UsePathStyle = true })
	_, err = unknown.ListBuckets(ctx, &s3.ListBucketsInput{})
	code, status = apiCode(t, err)
	require.Equal(t, "InvalidAccessKeyId", code)
	require.Equal(t, http.StatusForbidden, status)
	got, err := srv.Store.GetObject(ctx, "sdk-bucket", "dir/hello.txt", matrixobject.GetOptions{})
	require.NoError(t, err)
	gb, _ := io.ReadAll(got)
	got.Close()
	require.Equal(t, small, gb, "the rejected put changed nothing")

	// Deletes.
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("sdk-bucket")})
	code, status = apiCode(t, err)
	require.Equal(t, "BucketNotEmpty", code)
	require.Equal(t, http.StatusConflict, status)
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt")})
	require.NoError(t, err)
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt")})
	require.NoError(t, err, "deleting a missing key succeeds, as in S3")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sdk-bucket"), Key: aws.String("dir/hello.txt")})
	_, status = apiCode(t, err)
	require.Equal(t, http.StatusNotFound, status)
	all, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("sdk-bucket")})
	require.NoError(t, err)
	var objs []types.ObjectIdentifier
	for _, o := range all.Contents {
		objs = append(objs, types.ObjectIdentifier{Key: o.Key})
	}
	dr, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("sdk-bucket"), Delete: &types.Delete{Objects: objs}})
	require.NoError(t, err)
	require.Len(t, dr.Deleted, len(objs))
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("sdk-bucket")})
	require.NoError(t, err)
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("sdk-bucket")})
	code, status = apiCode(t, err)
	require.Equal(t, "NoSuchBucket", code)
	require.Equal(t, http.StatusNotFound, status)
}
