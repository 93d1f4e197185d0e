package s3api

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// chunkedReader decodes an aws-chunked body:
//
//	<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n ... 0[;chunk-signature=<sig>]\r\n
//	[<trailer name>:<value>\r\n ...][x-amz-trailer-signature:<sig>\r\n]\r\n
//
// With a signer, every chunk signature (and the trailer signature, when
// there is a trailer) is checked against the chain that starts at the
// request's signature; a chunk's bytes are returned as they arrive and a bad
// signature fails the Read that reaches the chunk's end, so a consumer that
// commits only at EOF never commits unverified bytes. The decoded length
// must equal x-amz-decoded-content-length when that is given (want >= 0).
type chunkedReader struct {
	br       *bufio.Reader
	sig      *signer
	trailer  bool
	prev     string
	left     int64
	chunkSHA hash.Hash
	done     bool
	err      error
	decoded  int64
	want     int64
	trailers map[string]string
	// pendingSig is the signature of the chunk being read.
	pendingSig string
}

const (
	maxChunkLine = 4096
	maxTrailers  = 16
)

func newChunkedReader(r io.Reader, sig *signer, trailer bool, decodedLen int64) *chunkedReader {
	c := &chunkedReader{br: bufio.NewReaderSize(r, 64<<10), sig: sig, trailer: trailer, want: decodedLen, trailers: map[string]string{}}
	if sig != nil {
		c.prev = sig.seed
		c.chunkSHA = sha256.New()
	}
	return c
}

func errIncompleteBody(why string) *apiError {
	return newErr("IncompleteBody", http.StatusBadRequest, "The aws-chunked body is malformed: %s.", why)
}

// Trailer returns a trailer value; valid after Read returned io.EOF.
func (c *chunkedReader) Trailer(name string) (string, bool) {
	v, ok := c.trailers[name]
	return v, ok
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for c.left == 0 {
		if c.done {
			return 0, io.EOF
		}
		if err := c.next(); err != nil {
			c.err = err
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	c.decoded += int64(n)
	if c.chunkSHA != nil {
		c.chunkSHA.Write(p[:n])
	}
	if err == io.EOF {
		err = errIncompleteBody("the body ended inside a chunk")
	}
	if err == nil && c.left == 0 {
		err = c.endChunk()
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

func (c *chunkedReader) readLine() (string, error) {
	var line []byte
	for {
		frag, err := c.br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxChunkLine {
			return "", errIncompleteBody("a chunk header line is too long")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			return "", errIncompleteBody("the body ended early")
		}
		if err != nil {
			return "", err
		}
		if !bytes.HasSuffix(line, []byte("\r\n")) {
			return "", errIncompleteBody("a line does not end in CRLF")
		}
		return string(line[:len(line)-2]), nil
	}
}

// next reads a chunk header; for the final chunk it also reads the trailer.
func (c *chunkedReader) next() error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	sizeHex, ext, _ := strings.Cut(line, ";")
	if sizeHex == "" || len(sizeHex) > 15 {
		return errIncompleteBody("bad chunk size")
	}
	size, err := strconv.ParseInt(sizeHex, 16, 64)
	if err != nil || size < 0 {
		return errIncompleteBody("bad chunk size")
	}
	if c.sig != nil {
		sig, ok := strings.CutPrefix(ext, "chunk-signature=")
		if !ok || !isHex(sig, 64) {
			return errIncompleteBody("a chunk has no chunk-signature")
		}
		c.pendingSig = sig
	}
	if c.want >= 0 && c.decoded+size > c.want {
		return errIncompleteBody("the body is longer than x-amz-decoded-content-length")
	}
	c.left = size
	if size > 0 {
		return nil
	}
	// The final chunk.
	if err := c.verifyChunk(); err != nil {
		return err
	}
	c.done = true
	if c.want >= 0 && c.decoded != c.want {
		return errIncompleteBody("the body is shorter than x-amz-decoded-content-length")
	}
	return c.readTrailer()
}

func (c *chunkedReader) verifyChunk() error {
	if c.sig == nil {
		return nil
	}
	sum := hex.EncodeToString(c.chunkSHA.Sum(nil))
	c.chunkSHA.Reset()
	want := sign(c.sig.key, chunkStringToSign(c.sig.amzDate, c.sig.scope, c.prev, sum))
	if !signaturesEqual(want, c.pendingSig) {
		return errSignature()
	}
	c.prev = c.pendingSig
	return nil
}

// endChunk reads the CRLF after a chunk's data and checks its signature.
func (c *chunkedReader) endChunk() error {
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil || crlf != [2]byte{'\r', '\n'} {
		return errIncompleteBody("a chunk is not followed by CRLF")
	}
	return c.verifyChunk()
}

func (c *chunkedReader) readTrailer() error {
	var canon strings.Builder
	trailerSig := ""
	for n := 0; ; n++ {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if line == "" {
			break
		}
		if !c.trailer || n >= maxTrailers {
			return errIncompleteBody("unexpected trailer")
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return errIncompleteBody("a trailer is not name:value")
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if k == "x-amz-trailer-signature" {
			trailerSig = v
			continue
		}
		c.trailers[k] = v
		canon.WriteString(k + ":" + v + "\n")
	}
	if c.sig != nil && c.trailer && len(c.trailers) > 0 {
		want := sign(c.sig.key, trailerStringToSign(c.sig.amzDate, c.sig.scope, c.prev, sha256Hex(canon.String())))
		if !signaturesEqual(want, trailerSig) {
			return errSignature()
		}
	}
	return nil
}
