package resp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// selfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "temporalstore test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// With a certificate the server speaks TLS only: a TLS client with the
// right roots and a token works, a plain-text client does not.
func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	addr, _ := start(t, Options{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, Tokens: []string{"tok"}})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: "tok", TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}})
	defer c.Close()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.Equal(t, "v", c.Get(ctx, "k").Val())
	plain := redis.NewClient(&redis.Options{Addr: addr, Password: "tok", MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	require.Error(t, plain.Ping(ctx).Err())
	untrusting := redis.NewClient(&redis.Options{Addr: addr, Password: "tok", MaxRetries: -1, TLSConfig: &tls.Config{ServerName: "127.0.0.1"}})
	defer untrusting.Close()
	require.Error(t, untrusting.Ping(ctx).Err())
}
