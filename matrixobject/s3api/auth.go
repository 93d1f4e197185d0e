package s3api

import (
	"crypto/md5"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// authInfo is what authentication established about a request.
type authInfo struct {
	accessKey   string
	payloadHash string
	signer      *signer // nil for anonymous requests
}

func sha256Sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
func md5Sum(b []byte) []byte    { s := md5.Sum(b); return s[:] }

// authenticate checks the request's signature: the Authorization header or
// a presigned URL's query parameters. Unsigned requests pass only with
// AllowAnonymous.
func (h *Handler) authenticate(r *http.Request) (*authInfo, *apiError) {
	if az := r.Header.Get("Authorization"); az != "" {
		return h.authHeader(r, az)
	}
	if r.URL.Query().Has("X-Amz-Algorithm") {
		return h.authPresigned(r)
	}
	if h.opts.AllowAnonymous {
		return &authInfo{payloadHash: unsignedPayload}, nil
	}
	return nil, errAccessDenied("Access Denied")
}

// checkScope checks the access key, region, service and date of a
// signature and returns the secret.
func (h *Handler) checkScope(a authHeader, amzDate string) (string, *apiError) {
	secret, ok := h.opts.Credentials[a.AccessKey]
	if !ok {
		return "", newErr("InvalidAccessKeyId", http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records.")
	}
	if a.Region != h.opts.Region {
		return "", newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed; the region '%s' is wrong; expecting '%s'", a.Region, h.opts.Region)
	}
	if a.Service != "s3" {
		return "", newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed; incorrect service %q. This endpoint belongs to \"s3\".", a.Service)
	}
	if !strings.HasPrefix(amzDate, a.Date) {
		return "", newErr("AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed; the credential date %s does not match the request date %s.", a.Date, amzDate)
	}
	return secret, nil
}

func (h *Handler) authHeader(r *http.Request, az string) (*authInfo, *apiError) {
	a, aerr := parseAuthorization(az)
	if aerr != nil {
		return nil, aerr
	}
	amzDate := r.Header.Get("X-Amz-Date")
	var t time.Time
	if amzDate != "" {
		var ok bool
		if t, ok = parseAmzDate(amzDate); !ok {
			return nil, errAccessDenied("AWS authentication requires a valid Date or x-amz-date header")
		}
	} else if d, err := http.ParseTime(r.Header.Get("Date")); err == nil {
		t, amzDate = d.UTC(), d.UTC().Format(amzDateFormat)
	} else {
		return nil, errAccessDenied("AWS authentication requires a valid Date or x-amz-date header")
	}
	secret, aerr := h.checkScope(a, amzDate)
	if aerr != nil {
		return nil, aerr
	}
	if d := h.opts.Now().Sub(t); d > h.opts.MaxClockSkew || d < -h.opts.MaxClockSkew {
		return nil, newErr("RequestTimeTooSkewed", http.StatusForbidden, "The difference between the request time and the current time is too large.")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, newErr("InvalidRequest", http.StatusBadRequest, "Missing required header for this request: x-amz-content-sha256")
	}
	if aerr := checkPayloadHash(payload); aerr != nil {
		return nil, aerr
	}
	key := signingKey(secret, a.Date, a.Region, a.Service)
	want := sign(key, stringToSign(amzDate, a.scope(), canonicalRequest(r, a.SignedHeaders, payload, "")))
	if !signaturesEqual(want, a.Signature) {
		return nil, errSignature()
	}
	return &authInfo{accessKey: a.AccessKey, payloadHash: payload, signer: &signer{key: key, amzDate: amzDate, scope: a.scope(), seed: a.Signature}}, nil
}

func checkPayloadHash(p string) *apiError {
	switch p {
	case unsignedPayload, streamingSigned, streamingSignedTrailer, streamingUnsignedTrailer:
		return nil
	}
	if isHex(p, 64) {
		return nil
	}
	return newErr("InvalidArgument", http.StatusBadRequest, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a STREAMING-* mode or a hex SHA-256")
}

func (h *Handler) authPresigned(r *http.Request) (*authInfo, *apiError) {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != algorithm {
		return nil, errInvalidArgument("X-Amz-Algorithm must be %s", algorithm)
	}
	var a authHeader
	if aerr := a.setCredential(q.Get("X-Amz-Credential")); aerr != nil {
		return nil, aerr
	}
	if aerr := a.setSignedHeaders(q.Get("X-Amz-SignedHeaders")); aerr != nil {
		return nil, aerr
	}
	a.Signature = q.Get("X-Amz-Signature")
	if !isHex(a.Signature, 64) {
		return nil, errAccessDenied("X-Amz-Signature must be 64 hex digits")
	}
	amzDate := q.Get("X-Amz-Date")
	t, ok := parseAmzDate(amzDate)
	if !ok {
		return nil, errAccessDenied("X-Amz-Date is not valid")
	}
	secret, aerr := h.checkScope(a, amzDate)
	if aerr != nil {
		return nil, aerr
	}
	exp, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || exp < 1 || exp > 604800 {
		return nil, errAccessDenied("X-Amz-Expires must be between 1 and 604800 seconds")
	}
	now := h.opts.Now()
	if now.After(t.Add(time.Duration(exp)*time.Second)) || t.Sub(now) > h.opts.MaxClockSkew {
		return nil, errAccessDenied("Request has expired")
	}
	payload := q.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = unsignedPayload
	}
	key := signingKey(secret, a.Date, a.Region, a.Service)
	want := sign(key, stringToSign(amzDate, a.scope(), canonicalRequest(r, a.SignedHeaders, payload, "X-Amz-Signature")))
	if !signaturesEqual(want, a.Signature) {
		return nil, errSignature()
	}
	return &authInfo{accessKey: a.AccessKey, payloadHash: payload}, nil
}

// checksumHeaders are the x-amz-checksum-* headers, in the order they are
// looked for.
var checksumHeaders = []string{"x-amz-checksum-crc32", "x-amz-checksum-crc32c", "x-amz-checksum-crc64nvme", "x-amz-checksum-sha1", "x-amz-checksum-sha256"}

// body returns the request body decoded as its x-amz-content-sha256 says
// (aws-chunked for the STREAMING modes, with chunk signatures checked),
// wrapped to check an x-amz-checksum-* header or trailer. It also returns
// the hex SHA-256 the caller must check the body against, when the payload
// hash is one.
func (h *Handler) body(req *request) (io.Reader, string, *apiError) {
	r := req.r
	var body io.Reader = r.Body
	if r.Body == nil {
		body = http.NoBody
	}
	payload := req.auth.payloadHash
	expectSHA := ""
	var chunked *chunkedReader
	switch payload {
	case unsignedPayload:
	case streamingSigned, streamingSignedTrailer, streamingUnsignedTrailer:
		decoded := int64(-1)
		if v := r.Header.Get("x-amz-decoded-content-length"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, "", errInvalidArgument("x-amz-decoded-content-length %q is not a length", v)
			}
			decoded = n
		} else {
			return nil, "", newErr("MissingContentLength", http.StatusLengthRequired, "x-amz-decoded-content-length is required with %s", payload)
		}
		var sig *signer
		if payload != streamingUnsignedTrailer {
			if req.auth.signer == nil {
				return nil, "", errAccessDenied("%s needs a signed request", payload)
			}
			sig = req.auth.signer
		}
		chunked = newChunkedReader(body, sig, payload != streamingSigned, decoded)
		body = chunked
	default:
		expectSHA = payload
	}
	for _, name := range checksumHeaders {
		if v := r.Header.Get(name); v != "" {
			return &checksumReader{r: body, name: name, h: newChecksum(name), want: func() (string, bool) { return v, true }}, expectSHA, nil
		}
	}
	if t := strings.ToLower(strings.TrimSpace(r.Header.Get("x-amz-trailer"))); t != "" {
		hsh := newChecksum(t)
		if hsh == nil || chunked == nil {
			return nil, "", errInvalidArgument("x-amz-trailer %q is not supported here", t)
		}
		return &checksumReader{r: body, name: t, h: hsh, want: func() (string, bool) { return chunked.Trailer(t) }}, expectSHA, nil
	}
	return body, expectSHA, nil
}
