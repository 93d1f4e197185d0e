// Package respcompat tests the RESP server with redis-py, the Python
// client from PyPI: its tests start the server in process over a fresh
// engine and run testdata/redispy_check.py against it in RESP2 and RESP3.
package respcompat
