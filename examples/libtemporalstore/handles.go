//go:build cgo

package main

import "runtime/cgo"

// A handle is a runtime/cgo.Handle of a *conn. Handles are never reused
// within a process, so a closed one stays invalid for good.

// newHandle registers c and returns its handle (never 0).
func newHandle(c *conn) uintptr { return uintptr(cgo.NewHandle(c)) }

// lookup returns h's conn, or nil when h is not open: closed, never
// opened, or some other value's handle. cgo.Handle.Value panics on an
// invalid handle; that panic alone is caught here.
func lookup(h uintptr) (c *conn) {
	if h == 0 {
		return nil
	}
	defer func() {
		if recover() != nil {
			c = nil
		}
	}()
	c, _ = cgo.Handle(h).Value().(*conn)
	return c
}

// release invalidates h and returns its conn, or nil when h was not open.
// Of two releases of one handle at once, one gets the conn.
func release(h uintptr) (c *conn) {
	if c = lookup(h); c == nil {
		return nil
	}
	defer func() {
		if recover() != nil { // deleted by another release since lookup
			c = nil
		}
	}()
	cgo.Handle(h).Delete()
	return c
}
