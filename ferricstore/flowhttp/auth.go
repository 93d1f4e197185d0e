package flowhttp

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// access is what a request's token allows.
type access uint8

const (
	accessNone access = iota
	accessRead
	accessWrite
)

// tokens holds the digests of the accepted tokens. A presented token is
// hashed and compared with every digest in constant time, so that
// neither its length nor which token it is close to shows in the time
// taken.
type tokens struct {
	rw, ro [][sha256.Size]byte
}

func newTokens(rw, ro []string) tokens {
	var t tokens
	for _, s := range rw {
		t.rw = append(t.rw, sha256.Sum256([]byte(s)))
	}
	for _, s := range ro {
		t.ro = append(t.ro, sha256.Sum256([]byte(s)))
	}
	return t
}

// check returns what r's bearer token allows: everything when no token
// is configured.
func (t *tokens) check(r *http.Request) access {
	if len(t.rw)+len(t.ro) == 0 {
		return accessWrite
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return accessNone
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	var rw, ro int
	for i := range t.rw {
		rw |= subtle.ConstantTimeCompare(d[:], t.rw[i][:])
	}
	for i := range t.ro {
		ro |= subtle.ConstantTimeCompare(d[:], t.ro[i][:])
	}
	switch {
	case rw == 1:
		return accessWrite
	case ro == 1:
		return accessRead
	}
	return accessNone
}

// needs is the access method asks for: reading for GET (and HEAD, which
// the GET routes answer), writing for the rest.
func needs(method string) access {
	if method == http.MethodGet || method == http.MethodHead {
		return accessRead
	}
	return accessWrite
}
