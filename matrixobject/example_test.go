package matrixobject_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// A bucket, an object written and read back, whole and by range.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "matrixobject-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := matrixobject.Open(dir, matrixobject.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if err := s.CreateBucket(ctx, "photos", matrixobject.Quota{}); err != nil {
		panic(err)
	}
	info, err := s.PutObject(ctx, "photos", "notes/hello.txt", strings.NewReader("hello, object store"), matrixobject.PutOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Size, info.ETag)
	r, err := s.GetObject(ctx, "photos", "notes/hello.txt", matrixobject.GetOptions{})
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	fmt.Println(string(b))
	part := make([]byte, 6)
	r, err = s.GetObject(ctx, "photos", "notes/hello.txt", matrixobject.GetOptions{})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	if _, err := r.ReadAt(part, 7); err != nil {
		panic(err)
	}
	fmt.Println(string(part))
	// Output:
	// 19 ee1db6aa9820372cbfba04a2813c4951
	// hello, object store
	// object
}
