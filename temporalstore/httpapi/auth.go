package httpapi

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
// hashed and compared with every digest in constant time, so neither its
// length nor which token it is close to shows in the time taken.
type tokens struct {
	rw, ro [][sha256.Size]byte
	// tenants are the tenant tokens' digests (Options.TenantTokens).
	tenants []tenantDigest
}

type tenantDigest struct {
	d [sha256.Size]byte
	TenantToken
}

func newTokens(rw, ro []string, tenants map[string]TenantToken) tokens {
	var t tokens
	for _, s := range rw {
		t.rw = append(t.rw, sha256.Sum256([]byte(s)))
	}
	for _, s := range ro {
		t.ro = append(t.ro, sha256.Sum256([]byte(s)))
	}
	for s, tt := range tenants {
		t.tenants = append(t.tenants, tenantDigest{sha256.Sum256([]byte(s)), tt})
	}
	return t
}

func (t *tokens) enabled() bool { return len(t.rw)+len(t.ro)+len(t.tenants) > 0 }

// bearer is the digest of r's bearer token, false without one.
func bearer(r *http.Request) ([sha256.Size]byte, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256([]byte(strings.TrimSpace(tok))), true
}

// tenant returns the tenant token r bears, false for any other.
func (t *tokens) tenant(r *http.Request) (TenantToken, bool) {
	d, ok := bearer(r)
	if !ok {
		return TenantToken{}, false
	}
	var tt TenantToken
	found := 0
	for i := range t.tenants {
		if subtle.ConstantTimeCompare(d[:], t.tenants[i].d[:]) == 1 {
			tt, found = t.tenants[i].TenantToken, 1
		}
	}
	return tt, found == 1
}

// check returns what r's bearer token allows (everything when no token
// is configured). A tenant token is none of the global tokens it checks:
// only the routes that confine it to its tenant take one (access).
func (t *tokens) check(r *http.Request) access {
	if !t.enabled() {
		return accessWrite
	}
	d, ok := bearer(r)
	if !ok {
		return accessNone
	}
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
