package blobbench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/temporalstore/temporalstore-go/temporalstore/client"
)

// Arm names, in the order they alternate within a repeat.
const (
	armBlob  = "ours-blob"
	armNull  = "null-http"
	armDisk  = "disk"
	armRESP  = "ours-resp"
	armRedis = "redis"
	armHash  = "sha256"
)

// namespace is the blob namespace the benchmark writes in.
const namespace = "bench"

// copyBuf is the size of every read and of the disk arm's writes: as a
// request body streams in, not the whole item in one call.
const copyBuf = 1 << 20

// arm is one system of a comparison. Each repeat it writes every item of a
// corpus, reads them all back, and clears them.
type arm interface {
	// write stores item i, whose hex SHA-256 is sum, durably as the arm
	// defines it.
	write(ctx context.Context, i int, item []byte, sum string) error
	// read reads item i back whole and checks it against want.
	read(ctx context.Context, i int, want []byte, sum string) error
	// clear removes items 0 to n-1, untimed.
	clear(ctx context.Context, n int) error
}

// coldArm is an arm whose stored bytes can be dropped from the page cache,
// for a read that comes from the disk.
type coldArm interface {
	arm
	dropCache() error
}

// hashArm computes the SHA-256 of each item, as the blob store does of
// every upload, and checks it: that work alone, on one core, bounds an
// upload before any transfer. Its read pass hashes again.
type hashArm struct{}

func (hashArm) write(_ context.Context, _ int, item []byte, sum string) error {
	if d := sha256.Sum256(item); hex.EncodeToString(d[:]) != sum {
		return fmt.Errorf("%w: SHA-256 %x, want %s", errMismatch, d, sum)
	}
	return nil
}

func (a hashArm) read(ctx context.Context, i int, item []byte, sum string) error {
	return a.write(ctx, i, item, sum)
}

func (hashArm) clear(context.Context, int) error { return nil }

// blobArm is ours: the server's /blob routes through the Go client.
type blobArm struct {
	c *client.HTTP
	// dir is the server's blob store directory, <data>/blobs.
	dir string
	buf []byte
}

func blobKey(i int) string { return fmt.Sprintf("item-%04d", i) }

func (a *blobArm) write(ctx context.Context, i int, item []byte, sum string) error {
	info, err := a.c.PutBlob(ctx, namespace, blobKey(i), bytes.NewReader(item), "")
	if err != nil {
		return err
	}
	if info.Size != int64(len(item)) || info.SHA256 != sum {
		return fmt.Errorf("%w: stored %d bytes of SHA-256 %s, want %d of %s", errMismatch, info.Size, info.SHA256, len(item), sum)
	}
	return nil
}

func (a *blobArm) read(ctx context.Context, i int, want []byte, sum string) error {
	b, err := a.c.GetBlob(ctx, namespace, blobKey(i), nil)
	if err != nil {
		return err
	}
	defer b.Close()
	if b.Info.SHA256 != "" && b.Info.SHA256 != sum {
		return fmt.Errorf("%w: the server names SHA-256 %s, want %s", errMismatch, b.Info.SHA256, sum)
	}
	return readCheck(b, want, a.buf)
}

func (a *blobArm) clear(ctx context.Context, n int) error {
	for i := range n {
		if err := a.c.DeleteBlob(ctx, namespace, blobKey(i)); err != nil {
			return err
		}
	}
	return nil
}

func (a *blobArm) dropCache() error { return dropPages(a.dir) }

// diskArm is the disk's own limit for the same durable write: a new
// temporary file, fsync, rename into place, fsync of the directory, which
// is what the blob store does short of hashing; and a plain read back.
type diskArm struct {
	dir string
	buf []byte
}

func (a *diskArm) path(i int) string { return filepath.Join(a.dir, blobKey(i)) }

func (a *diskArm) write(_ context.Context, i int, item []byte, _ string) error {
	// Pieces of copyBuf, as a streamed body is written: the plain Reader
	// keeps io.CopyBuffer from handing the file the item in one call.
	return a.store(i, struct{ io.Reader }{bytes.NewReader(item)})
}

// store writes r's bytes as item i: a new temporary file, fsync, rename
// into place, fsync of the directory.
func (a *diskArm) store(i int, r io.Reader) error {
	final := a.path(i)
	f, err := os.CreateTemp(a.dir, ".tmp-")
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(struct{ io.Writer }{f}, r, a.buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), final)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(a.dir)
}

func (a *diskArm) read(_ context.Context, i int, want []byte, _ string) error {
	f, err := os.Open(a.path(i))
	if err != nil {
		return err
	}
	defer f.Close()
	return readCheck(f, want, a.buf)
}

func (a *diskArm) clear(_ context.Context, n int) error {
	for i := range n {
		if err := os.Remove(a.path(i)); err != nil {
			return err
		}
	}
	return nil
}

func (a *diskArm) dropCache() error { return dropPages(a.dir) }

// nullHTTP is a server in this process that does on HTTP what the disk
// arm does, and nothing else: a PUT's body to a new temporary file,
// fsync, rename, fsync of the directory; a GET's file handed to the
// connection (sendfile). The blob arm against it shows what the HTTP
// transfer itself costs on this machine: the ceiling of any HTTP blob
// store, hashing and bookkeeping aside.
type nullHTTP struct {
	disk *diskArm
	srv  *http.Server
	url  string
	hc   *http.Client
	// buf is the client's read buffer; disk.buf the server's.
	buf []byte
}

func startNullHTTP(dir string) (*nullHTTP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &nullHTTP{disk: &diskArm{dir: dir, buf: make([]byte, copyBuf)}, url: "http://" + ln.Addr().String() + "/", hc: &http.Client{}, buf: make([]byte, copyBuf)}
	n.srv = &http.Server{Handler: http.HandlerFunc(n.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.srv.Serve(ln) }()
	return n, nil
}

func (n *nullHTTP) close() error {
	n.hc.CloseIdleConnections()
	return n.srv.Close()
}

func (n *nullHTTP) serve(w http.ResponseWriter, r *http.Request) {
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodPut:
		if err := n.disk.store(i, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	case http.MethodGet:
		f, err := os.Open(n.disk.path(i))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(st.Size(), 10))
		_, _ = io.Copy(w, f)
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
	}
}

func (n *nullHTTP) write(ctx context.Context, i int, item []byte, _ string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, n.url+strconv.Itoa(i), bytes.NewReader(item))
	if err != nil {
		return err
	}
	resp, err := n.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("null HTTP server: PUT: HTTP %d", resp.StatusCode)
	}
	return nil
}

func (n *nullHTTP) read(ctx context.Context, i int, want []byte, _ string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+strconv.Itoa(i), nil)
	if err != nil {
		return err
	}
	resp, err := n.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("null HTTP server: GET: HTTP %d", resp.StatusCode)
	}
	return readCheck(resp.Body, want, n.buf)
}

func (n *nullHTTP) clear(ctx context.Context, k int) error { return n.disk.clear(ctx, k) }

func (n *nullHTTP) dropCache() error { return n.disk.dropCache() }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// dropPages evicts every file under dir from the page cache. The files
// were fsynced, so their pages are clean and POSIX_FADV_DONTNEED drops
// them; a file that vanished meanwhile (the server's temporary files) is
// skipped.
func dropPages(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		return err
	})
}

// respArm is SET and GET of whole values over RESP, against our server or
// redis-server alike.
type respArm struct {
	c *redis.Client
	// redis waits out a background AOF rewrite after clearing, so that no
	// later arm shares the disk with it.
	redis bool
}

// refusal is a SET the server answered with an error reply: our server's
// refusal of a value larger than it takes.
type refusal struct{ reply error }

func (r *refusal) Error() string { return "SET refused: " + r.reply.Error() }

func newRESPClient(addr string) *redis.Client {
	// One connection; no retries (a retried SET would be timed twice); a
	// value takes well under the timeouts on any disk.
	return redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 2 * time.Minute, WriteTimeout: 2 * time.Minute})
}

func respKey(i int) string { return "blobbench:" + blobKey(i) }

func (a *respArm) write(ctx context.Context, i int, item []byte, _ string) error {
	err := a.c.Set(ctx, respKey(i), item, 0).Err()
	var reply redis.Error
	if errors.As(err, &reply) {
		return &refusal{reply: err}
	}
	return err
}

func (a *respArm) read(ctx context.Context, i int, want []byte, _ string) error {
	got, err := a.c.Get(ctx, respKey(i)).Bytes()
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: %d bytes, want %d", errMismatch, len(got), len(want))
	}
	return nil
}

func (a *respArm) clear(ctx context.Context, n int) error {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = respKey(i)
	}
	if err := a.c.Del(ctx, keys...).Err(); err != nil || !a.redis {
		return err
	}
	for {
		info, err := a.c.Info(ctx, "persistence").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "aof_rewrite_in_progress:1") && !strings.Contains(info, "aof_rewrite_scheduled:1") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// serverVersion is redis_version from INFO server, or "" when unknown.
func serverVersion(ctx context.Context, c *redis.Client) string {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return v
		}
	}
	return ""
}
