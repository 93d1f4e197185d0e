package s3api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4, as S3 uses it: header authentication
// (Authorization: AWS4-HMAC-SHA256 ...) and presigned URLs (X-Amz-* query
// parameters), with the payload hash taken from x-amz-content-sha256.

const (
	algorithm       = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// Streaming payload modes (aws-chunked bodies).
	streamingSigned          = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingSignedTrailer   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	emptySHA256              = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// authHeader is a parsed Authorization header (or the X-Amz-* query
// parameters of a presigned URL).
type authHeader struct {
	AccessKey     string
	Date          string // yyyymmdd of the credential scope
	Region        string
	Service       string
	SignedHeaders []string
	Signature     string
}

func (a authHeader) scope() string {
	return a.Date + "/" + a.Region + "/" + a.Service + "/aws4_request"
}

// parseAuthorization parses
//
//	AWS4-HMAC-SHA256 Credential=AKID/20260102/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=hex
func parseAuthorization(h string) (authHeader, *apiError) {
	var a authHeader
	malformed := func(why string) (authHeader, *apiError) {
		return authHeader{}, newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed; %s.", why)
	}
	alg, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || alg != algorithm {
		return malformed("the algorithm must be " + algorithm)
	}
	var cred, signed string
	for part := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return malformed("a component is not key=value")
		}
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			a.Signature = v
		default:
			return malformed("unknown component " + strconv.Quote(k))
		}
	}
	if cred == "" || signed == "" || a.Signature == "" {
		return malformed("Credential, SignedHeaders and Signature are required")
	}
	if err := a.setCredential(cred); err != nil {
		return authHeader{}, err
	}
	if err := a.setSignedHeaders(signed); err != nil {
		return authHeader{}, err
	}
	if !isHex(a.Signature, 64) {
		return malformed("the signature must be 64 hex digits")
	}
	return a, nil
}

func (a *authHeader) setCredential(cred string) *apiError {
	f := strings.Split(cred, "/")
	if len(f) != 5 || f[0] == "" || f[4] != "aws4_request" || len(f[1]) != 8 || !isDigits(f[1]) || f[2] == "" || f[3] == "" {
		return newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "The credential %q is malformed; expected <key>/<yyyymmdd>/<region>/s3/aws4_request.", cred)
	}
	a.AccessKey, a.Date, a.Region, a.Service = f[0], f[1], f[2], f[3]
	return nil
}

func (a *authHeader) setSignedHeaders(signed string) *apiError {
	a.SignedHeaders = strings.Split(signed, ";")
	for _, h := range a.SignedHeaders {
		if h == "" || strings.ToLower(h) != h || strings.ContainsAny(h, " \t:") {
			return newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "SignedHeaders %q is malformed.", signed)
		}
	}
	if !slices.Contains(a.SignedHeaders, "host") {
		return newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "SignedHeaders must include host.")
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// awsEscape percent-encodes s as SigV4 requires: every byte but
// A-Z a-z 0-9 - _ . ~ (and '/' when keepSlash) as %XX in upper case.
func awsEscape(s string, keepSlash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		}
	}
	return b.String()
}

// canonicalQuery sorts and re-encodes a raw query string, leaving out skip
// (the signature parameter of a presigned URL).
func canonicalQuery(raw, skip string) string {
	type kv struct{ k, v string }
	var kvs []kv
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			dv = v
		}
		if dk == skip {
			continue
		}
		kvs = append(kvs, kv{awsEscape(dk, false), awsEscape(dv, false)})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	var b strings.Builder
	for i, p := range kvs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// headerValue returns the canonical value of a signed header: values joined
// by commas, each trimmed with inner runs of spaces collapsed.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		vals = r.Header.Values("Content-Length")
		if len(vals) == 0 && r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		vals = r.TransferEncoding
	default:
		vals = r.Header.Values(name)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

// canonicalRequest builds the SigV4 canonical request of r.
func canonicalRequest(r *http.Request, signed []string, payloadHash, skipQuery string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	b.WriteString(awsEscape(path, true))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery, skipQuery))
	b.WriteByte('\n')
	for _, h := range signed {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signed, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// signingKey derives the SigV4 signing key of a secret for a scope.
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

// stringToSign is the SigV4 string to sign of a canonical request.
func stringToSign(amzDate, scope, canonical string) string {
	return algorithm + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex(canonical)
}

func sign(key []byte, sts string) string { return hex.EncodeToString(hmacSHA256(key, sts)) }

// signaturesEqual compares two hex signatures in constant time.
func signaturesEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(a)), []byte(strings.ToLower(b))) == 1
}

// chunkStringToSign is the string to sign of one aws-chunked chunk.
func chunkStringToSign(amzDate, scope, prev, chunkHash string) string {
	return "AWS4-HMAC-SHA256-PAYLOAD\n" + amzDate + "\n" + scope + "\n" + prev + "\n" + emptySHA256 + "\n" + chunkHash
}

// trailerStringToSign is the string to sign of an aws-chunked trailer.
func trailerStringToSign(amzDate, scope, prev, trailerHash string) string {
	return "AWS4-HMAC-SHA256-TRAILER\n" + amzDate + "\n" + scope + "\n" + prev + "\n" + trailerHash
}

// signer holds what the body decoder needs to check chunk signatures.
type signer struct {
	key     []byte
	amzDate string
	scope   string
	seed    string // the request's signature
}

// parseAmzDate parses an x-amz-date value.
func parseAmzDate(v string) (time.Time, bool) {
	t, err := time.Parse(amzDateFormat, v)
	return t, err == nil
}
