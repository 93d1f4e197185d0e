package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"context"
	"fmt"
	"unsafe"

	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// The exported functions' C types are cgo's spelling of temporalstore.h's
// (char* for const char*: cgo cannot say const); the ABI is the same.

//export ts_open
func ts_open(dataDir *C.char, errOut **C.char) (h C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			h = 0
			setErr(errOut, fmt.Errorf("libtemporalstore: panic: %v", r))
		}
	}()
	if dataDir == nil {
		setErr(errOut, errNoDir)
		return 0
	}
	c, err := openEngine(context.Background(), C.GoString(dataDir))
	if err != nil {
		setErr(errOut, err)
		return 0
	}
	return C.uintptr_t(newHandle(c))
}

//export ts_connect
func ts_connect(url *C.char, errOut **C.char) C.uintptr_t {
	return ts_connect_token(url, nil, errOut)
}

//export ts_connect_token
func ts_connect_token(url, token *C.char, errOut **C.char) (h C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			h = 0
			setErr(errOut, fmt.Errorf("libtemporalstore: panic: %v", r))
		}
	}()
	if url == nil {
		setErr(errOut, errNoURL)
		return 0
	}
	tok := ""
	if token != nil {
		tok = C.GoString(token)
	}
	c, err := connect(C.GoString(url), tok)
	if err != nil {
		setErr(errOut, err)
		return 0
	}
	return C.uintptr_t(newHandle(c))
}

//export ts_execute
func ts_execute(h C.uintptr_t, req *C.uint8_t, reqLen C.size_t, resp **C.uint8_t, respLen *C.size_t) (rc C.int) {
	if resp == nil || respLen == nil {
		return codeArgument
	}
	*resp, *respLen = nil, 0
	defer func() {
		if r := recover(); r != nil {
			rc = reply(resp, respLen, panicReply(r), codeInternal)
		}
	}()
	if req == nil && reqLen != 0 {
		return reply(resp, respLen, failed(wire.Status{Code: wire.CodeBadRequest, Message: "libtemporalstore: req is NULL"}), codeArgument)
	}
	c := lookup(uintptr(h))
	if c == nil {
		return reply(resp, respLen, failed(wire.Status{Code: wire.CodeBadRequest, Message: fmt.Sprintf("libtemporalstore: handle %d is not open", uintptr(h))}), codeHandle)
	}
	// A copy: the decoded command aliases its body, and the engine may
	// keep what it writes; the caller's buffer is its own again on return.
	body := bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(req)), reqLen))
	out, code := c.run(context.Background(), body)
	return reply(resp, respLen, out, code)
}

//export ts_free
func ts_free(p unsafe.Pointer) { C.free(p) }

//export ts_close
func ts_close(h C.uintptr_t) (rc C.int) {
	defer func() {
		if recover() != nil {
			rc = codeInternal
		}
	}()
	c := release(uintptr(h))
	if c == nil {
		return codeHandle
	}
	if err := c.close(); err != nil {
		return codeInternal
	}
	return codeOK
}

// reply hands out a copy of b in C memory and returns code.
func reply(resp **C.uint8_t, respLen *C.size_t, b []byte, code int) C.int {
	*resp = (*C.uint8_t)(C.CBytes(b))
	*respLen = C.size_t(len(b))
	return C.int(code)
}

// setErr hands out err's message in C memory, if the caller asked for it.
func setErr(errOut **C.char, err error) {
	if errOut != nil {
		*errOut = C.CString(err.Error())
	}
}

// main is required of a main package; a c-shared build never runs it.
func main() {}
