package matrixobject

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest object key, in bytes, as in S3.
const MaxKeyLen = 1024

// ValidateBucketName reports whether name follows S3's general-purpose
// bucket naming rules: 3 to 63 characters of lowercase letters, digits, dots
// and hyphens; a letter or digit first and last; no two adjacent dots; not an
// IP address; none of the prefixes and suffixes S3 reserves.
func ValidateBucketName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidBucketName, name, why)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("must be 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '.' || c == '-':
			if i == 0 || i == len(name)-1 {
				return bad("must begin and end with a letter or digit")
			}
			if c == '.' && name[i-1] == '.' {
				return bad("must not hold two adjacent periods")
			}
		default:
			return bad("may hold only lowercase letters, digits, periods and hyphens")
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return bad("must not be formatted as an IP address")
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return bad("must not begin with " + p)
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return bad("must not end with " + s)
		}
	}
	return nil
}

// ValidateKey reports whether key is a usable object key: 1 to 1024 bytes of
// UTF-8 without NUL bytes, and no path segment (between slashes) equal to
// "." or "..", so that no key can be read as a relative path.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w %q: not UTF-8", ErrInvalidKey, key)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("%w %q: holds a NUL byte", ErrInvalidKey, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%w %q: has a %q segment", ErrInvalidKey, key, seg)
		}
	}
	return nil
}
