package main

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"

	"github.com/temporalstore/temporalstore-go/examples/internal/cli"
	"github.com/temporalstore/temporalstore-go/examples/internal/tsstore"
	arkhttp "github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/matrixobject/s3api"
	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// tenantToken is one --tenant-token entry.
type tenantToken struct {
	token, tenant string
	readOnly      bool
}

// tenantTokenFlag is --tenant-token: token=tenant:rw or token=tenant:ro.
var tenantTokenFlag = cli.Flag[config]{Name: "tenant-token", Env: "TS_TENANT_TOKEN", Default: "",
	Usage: "comma-separated token=tenant:rw or token=tenant:ro entries (tenant: a namespace name), e.g. " +
		"k3y=acme:rw,r34d=acme:ro: a token of one tenant, whose tenant is the namespace of its tables. On RESP (AUTH) " +
		"its keys live in <tenant>/default (database n: <tenant>/default@n; the tables must be made first, e.g. TABLE CREATE " +
		"acme default); on HTTP (bearer) /execute and /batch_execute run in its namespace (a request naming another is " +
		"refused) and the other routes refuse it. Its commands count against the tenant's limit (TENANT SET, PUT " +
		"/tenants/{tenant}); ro reads only; no tenant token runs the table and tenant admin verbs and routes, the server-wide " +
		"verbs (CONFIG SET, SLOWLOG, SAVE, CLIENT LIST/KILL, FUNCTION LOAD, ...) or the streams, flows and pub/sub. On S3, " +
		"the token of a tenant named with lowercase letters and digits only signs as access key <tenant> (rw) or <tenant>-ro " +
		"(ro), the token as secret (the first listed of each), and reaches only the buckets named <tenant>-...; S3 then " +
		"requires signatures. With no --context-token, the context routes serve each rw token its tenant. Tokens turn auth on " +
		"as --token does; the table and tenant admin verbs and routes need a --token",
	Set: func(c *config, v string) error {
		c.tenantTokens = nil
		seen := map[string]bool{}
		for _, e := range cli.List(v) {
			tok, grant, ok := strings.Cut(e, "=")
			tenant, mode, ok2 := strings.Cut(grant, ":")
			if !ok || !ok2 || tok == "" || (mode != "rw" && mode != "ro") {
				return fmt.Errorf("tenant token %q is not token=tenant:rw or token=tenant:ro", redact(e))
			}
			if err := temporalstore.CheckName(tenant); err != nil {
				return fmt.Errorf("tenant token for %q: the tenant is no namespace name (letters, digits, '_', '.', '-')", tenant)
			}
			if tenant == tsstore.DefaultNamespace {
				return fmt.Errorf("tenant token for %q: the namespace of the server's context store", tenant)
			}
			if seen[tok] {
				return errors.New("a tenant token is listed twice")
			}
			seen[tok] = true
			c.tenantTokens = append(c.tenantTokens, tenantToken{token: tok, tenant: tenant, readOnly: mode == "ro"})
		}
		return nil
	}}

// redact is a flag entry without its token, for errors.
func redact(e string) string {
	if _, rest, ok := strings.Cut(e, "="); ok {
		return "…=" + rest
	}
	return "…"
}

// checkTenantTokens refuses tenant tokens that are global tokens too, and
// S3 access keys of tenants that --s3-credentials names.
func checkTenantTokens(c config) error {
	global := map[string]bool{}
	for _, t := range append(append([]string(nil), c.tokens...), c.readOnlyTokens...) {
		global[t] = true
	}
	for _, tt := range c.tenantTokens {
		if global[tt.token] {
			return errors.New("a --tenant-token token is also a --token or --readonly-token")
		}
		if key, ok := s3AccessKey(tt); ok && c.s3Keys[key] != "" {
			return fmt.Errorf("--s3-credentials names access key %q, which is tenant %s's", key, tt.tenant)
		}
	}
	return nil
}

// anyToken says whether the RESP and HTTP surfaces ask for a token.
func (c config) anyToken() bool {
	return len(c.tokens)+len(c.readOnlyTokens)+len(c.tenantTokens) > 0
}

// s3Signed says whether the S3 API asks for signatures: it has
// credentials, --s3-credentials' or a tenant token's.
func (c config) s3Signed() bool {
	for _, tt := range c.tenantTokens {
		if _, ok := s3AccessKey(tt); ok {
			return true
		}
	}
	return len(c.s3Keys) > 0
}

// tenantGrants are the tenant tokens as RESP and HTTP take them.
func tenantGrants(c config) map[string]temporalstore.TenantToken {
	out := map[string]temporalstore.TenantToken{}
	for _, tt := range c.tenantTokens {
		out[tt.token] = temporalstore.TenantToken{Tenant: tt.tenant, ReadOnly: tt.readOnly}
	}
	return out
}

// s3AccessKey is the S3 access key of a tenant token: <tenant>, or
// <tenant>-ro for a read-only one; false for a tenant whose name is not
// lowercase letters and digits alone. Such a name keeps "<tenant>-" a
// prefix no other tenant's buckets start with, and makes valid bucket
// names.
func s3AccessKey(tt tenantToken) (string, bool) {
	if strings.Trim(tt.tenant, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return "", false
	}
	if tt.readOnly {
		return tt.tenant + "-ro", true
	}
	return tt.tenant, true
}

// s3Credentials are the S3 API's access keys: --s3-credentials' and the
// tenant tokens', each of these scoped to its tenant's buckets.
func s3Credentials(c config, log *slog.Logger) (map[string]string, map[string]s3api.Scope) {
	creds, scopes := maps.Clone(c.s3Keys), map[string]s3api.Scope{}
	if creds == nil {
		creds = map[string]string{}
	}
	for _, tt := range c.tenantTokens {
		key, ok := s3AccessKey(tt)
		switch {
		case !ok:
			log.Warn("a tenant's tokens do not reach S3: its name is not lowercase letters and digits", "tenant", tt.tenant)
		case creds[key] != "":
			log.Warn("a tenant's later token of the same mode does not reach S3", "access_key", key)
		default:
			creds[key] = tt.token
			scopes[key] = s3api.Scope{BucketPrefix: tt.tenant + "-", ReadOnly: tt.readOnly}
		}
	}
	return creds, scopes
}

// contextTokens are the tokens of the context and memory routes: the
// --context-token ones; else the read-write tokens', --token's reaching
// the tenant "default" and each read-write --tenant-token its tenant.
// None when no token is configured at all (the routes are open, as the
// rest of the server).
func contextTokens(c config) map[string]arkhttp.TenantToken {
	if len(c.contextTokens) > 0 {
		return c.contextTokens
	}
	tokens := map[string]arkhttp.TenantToken{}
	for _, t := range c.tokens {
		tokens[t] = arkhttp.TenantToken{Tenant: "default", Admin: true}
	}
	for _, tt := range c.tenantTokens {
		if !tt.readOnly {
			tokens[tt.token] = arkhttp.TenantToken{Tenant: tt.tenant}
		}
	}
	return tokens
}

// refuseContext answers the context routes when tokens are configured but
// none reaches them (read-only ones only): the routes write, and have no
// read-only access.
var refuseContext = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`{"error":"no token configured reaches the context routes (--context-token, --token or a read-write --tenant-token)"}` + "\n"))
})
