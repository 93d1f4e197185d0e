// Package servertest runs an example server's binary for the server's
// tests: Build compiles it, Start runs it and waits for its "ready" log
// line, and Server reads the log it has written and stops or kills it.
// FreeAddr gives each listener a port of its own. It is imported by
// tests only.
//
//	bin := filepath.Join(t.TempDir(), "server")
//	require.NoError(t, servertest.Build(bin))
//	addr := servertest.FreeAddr(t)
//	srv := servertest.Start(t, bin, "--resp", addr)
//	defer srv.Stop()
package servertest
