// Package teststorage picks the storage the engine's tests run on: the
// disk wiring (matrixraft/wal logs, a matrixcache) by default, the
// in-memory reference implementations of package storage when the
// environment variable TEMPORALSTORE_TEST_STORAGE is "mem", so that every
// suite runs against both. Faults wraps either in logs that fail their
// appends and syncs on demand (a full disk, a failing device), for the
// tests of storage faults. Tests alone import it.
package teststorage
