package s3compat

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// The SDK's appends (PutObject's WriteOffsetBytes, as for S3 Express One
// Zone) reach the handler's append blobs: the offset must be the size,
// x-amz-object-size comes back, a wrong offset is InvalidWriteOffset.
func TestAWSSDKAppend(t *testing.T) {
	srv, err := StartServer(t.TempDir(), matrixobject.Options{}, map[string]string{testAccessKey: testSecret})
	require.NoError(t, err)
	defer srv.Close()
	c := newClient(t, srv.URL, testSecret)
	ctx := t.Context()
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("logs")})
	require.NoError(t, err)

	appendAt := func(off int64, p []byte) (*s3.PutObjectOutput, error) {
		return c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("logs"), Key: aws.String("seg/1"), Body: bytes.NewReader(p), WriteOffsetBytes: aws.Int64(off)})
	}
	first := randBytes(7, 100_000)
	out, err := appendAt(0, first)
	require.NoError(t, err)
	require.Equal(t, int64(len(first)), aws.ToInt64(out.Size))
	second := []byte("second append")
	out, err = appendAt(int64(len(first)), second)
	require.NoError(t, err)
	size := int64(len(first) + len(second))
	require.Equal(t, size, aws.ToInt64(out.Size))

	_, err = appendAt(0, []byte("late"))
	code, status := apiCode(t, err)
	require.Equal(t, "InvalidWriteOffset", code)
	require.Equal(t, http.StatusBadRequest, status)
	var iwo *types.InvalidWriteOffset
	require.ErrorAs(t, err, &iwo)

	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("logs"), Key: aws.String("seg/1")})
	require.NoError(t, err)
	require.Equal(t, size, aws.ToInt64(head.ContentLength))
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("logs"), Key: aws.String("seg/1"), Range: aws.String("bytes=99990-")})
	require.NoError(t, err)
	b, err := io.ReadAll(get.Body)
	get.Body.Close()
	require.NoError(t, err)
	require.Equal(t, append(bytes.Clone(first[99990:]), second...), b)

	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("logs"), Key: aws.String("seg/1")})
	require.NoError(t, err)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("logs"), Key: aws.String("seg/1")})
	_, status = apiCode(t, err)
	require.Equal(t, http.StatusNotFound, status)
}
