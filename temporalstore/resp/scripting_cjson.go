package resp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// cjsonError is an error raised into Lua in lua-cjson's words.
type cjsonError string

func (e cjsonError) Error() string { return string(e) }

// maxJSONDepth is lua-cjson's default nesting limit, both ways.
const maxJSONDepth = 1000

// newCJSONLib is Redis's cjson library (lua-cjson with its defaults):
// cjson.encode, cjson.decode and cjson.null.
func newCJSONLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	null := L.NewUserData()
	t.RawSetString("null", null)
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
		}
		b, err := appendJSON(nil, L.Get(1), null, 0)
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		L.Push(lua.LString(b))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
		}
		dec := json.NewDecoder(strings.NewReader(L.CheckString(1)))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		if err == nil {
			if _, extra := dec.Token(); !errors.Is(extra, io.EOF) {
				err = errors.New("trailing data")
			}
		}
		if err != nil {
			L.RaiseError("Expected value but found invalid token: %s", err.Error())
		}
		lv, err := jsonToLua(L, v, null, 0)
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		L.Push(lv)
		return 1
	}))
	return t
}

func jsonToLua(L *lua.LState, v any, null lua.LValue, depth int) (lua.LValue, error) {
	if depth > maxJSONDepth {
		return nil, cjsonError(fmt.Sprintf("Found too many nested data structures (%d)", depth))
	}
	switch v := v.(type) {
	case nil:
		return null, nil
	case bool:
		return lua.LBool(v), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return lua.LNumber(f), nil
	case string:
		return lua.LString(v), nil
	case []any:
		t := L.CreateTable(len(v), 0)
		for i, e := range v {
			lv, err := jsonToLua(L, e, null, depth+1)
			if err != nil {
				return nil, err
			}
			t.RawSetInt(i+1, lv)
		}
		return t, nil
	case map[string]any:
		t := L.CreateTable(0, len(v))
		for k, e := range v {
			lv, err := jsonToLua(L, e, null, depth+1)
			if err != nil {
				return nil, err
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

// appendJSON encodes v as lua-cjson does: numbers as "%.14g", "/"
// escaped, a table whose keys are all positive integers as an array
// (nulls in its holes, unless it is excessively sparse), any other as an
// object, an empty table as {}.
func appendJSON(b []byte, v lua.LValue, null lua.LValue, depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return nil, cjsonError(fmt.Sprintf("Cannot serialise, excessive nesting (%d)", depth))
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return append(b, "null"...), nil
	case lua.LBool:
		return strconv.AppendBool(b, bool(v)), nil
	case lua.LNumber:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, cjsonError("Cannot serialise number: must not be NaN or Inf")
		}
		return append(b, formatG(f, 14)...), nil
	case lua.LString:
		return appendJSONString(b, string(v)), nil
	case *lua.LUserData:
		if v == null {
			return append(b, "null"...), nil
		}
	case *lua.LTable:
		return appendJSONTable(b, v, null, depth)
	}
	return nil, cjsonError(fmt.Sprintf("Cannot serialise %s: type not supported", v.Type().String()))
}

func appendJSONTable(b []byte, t *lua.LTable, null lua.LValue, depth int) ([]byte, error) {
	// An array: every key a positive integer, not excessively sparse
	// (lua-cjson: more than 10 and more than twice the items).
	maxKey, items, array := 0, 0, true
	var keys []lua.LValue
	t.ForEach(func(k, _ lua.LValue) {
		keys = append(keys, k)
		items++
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) != math.Floor(float64(n)) || n < 1 {
			array = false
			return
		}
		maxKey = max(maxKey, int(min(float64(n), math.MaxInt32)))
	})
	if array && items > 0 {
		if maxKey > 10 && maxKey > 2*items {
			return nil, cjsonError("Cannot serialise table: excessively sparse array")
		}
		b = append(b, '[')
		for i := 1; i <= maxKey; i++ {
			if i > 1 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, t.RawGetInt(i), null, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	// Objects' keys in a stable order (lua-cjson follows Lua's table
	// order, which no client relies on).
	slices.SortFunc(keys, func(x, y lua.LValue) int { return strings.Compare(x.String(), y.String()) })
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		switch k := k.(type) {
		case lua.LString:
			b = appendJSONString(b, string(k))
		case lua.LNumber:
			b = appendJSONString(b, formatG(float64(k), 14))
		default:
			return nil, cjsonError("Cannot serialise table: table key must be a number or string")
		}
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, t.RawGet(k), null, depth+1); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONString quotes s as lua-cjson does: bytes as they are, apart
// from the quote, backslash, slash and control characters.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '/':
			b = append(b, `\/`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if c < 0x20 {
				b = fmt.Appendf(b, `\u%04x`, c)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
