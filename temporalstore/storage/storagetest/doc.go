// Package storagetest checks an implementation of package storage's
// interfaces against their contracts:
//
//	func TestLog(t *testing.T) { storagetest.Log(t, myOpenLog) }
//	func TestCache(t *testing.T) { storagetest.RecordCache(t, func(n int64) storage.RecordCache { return myCache(n) }) }
//
// The engine's own suites run on the implementations too; these tests pin
// each method's contract where a failure names the method.
package storagetest
