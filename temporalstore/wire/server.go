package wire

import (
	"bytes"
	"encoding/json"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
)

// Call is one request command translated for the engine (Translate).
type Call struct{ c call }

// Translate checks w and translates it into the engine's command, in table
// namespace/name for tenant. A malformed command is an error matching
// ErrBadRequest.
func Translate(w *Command, namespace, table, tenant string) (Call, error) {
	c, err := translate(w, namespace, table, tenant)
	return Call{c}, err
}

// TranslateInto is Translate writing into dst, which it overwrites (a Call
// is some 860 bytes: a batch translates into a reused slice of them).
func TranslateInto(dst *Call, w *Command, namespace, table, tenant string) error {
	return translateInto(&dst.c, w, namespace, table, tenant)
}

// Command is the engine command the call runs.
func (c *Call) Command() api.Command { return c.c.cmd }

// Lend is the call's engine command itself, for Engine.ExecuteInPlace,
// which may change it while it runs; the call's kind and shape, all a
// reply is written from, stay as they were.
func (c *Call) Lend() *api.Command { return &c.c.cmd }

// Kind is the wire kind, the label of the call's metrics.
func (c *Call) Kind() string { return c.c.kind }

// Unsupported says the kind is one of TemporalStore's Rust implementation
// that this server has no model for: it is answered CodeUnsupported
// without running.
func (c *Call) Unsupported() bool { return c.c.unsupported }

// Write says the call writes: a read-only token cannot send it.
func (c *Call) Write() bool { return c.c.write() }

// StatusOf is the status of the call's result r or error err.
func StatusOf(c *Call, r *api.Response, err error) Status { return statusOf(&c.c, r, err) }

// StatusOfError is the status of err, for a request no Call stands for.
func StatusOfError(err error) Status { return statusOf(&call{}, nil, err) }

// Encoder writes a reply body, JSON or MessagePack, in the shapes of the
// HTTP surface.
type Encoder struct{ w writer }

// NewEncoder returns an encoder of MessagePack when mp, else of JSON.
func NewEncoder(mp bool) *Encoder {
	if mp {
		return &Encoder{w: newMsgpackWriter()}
	}
	return &Encoder{w: &jsonWriter{buf: make([]byte, 0, 256)}}
}

// Bytes is what was written.
func (e *Encoder) Bytes() []byte { return e.w.bytes() }

// maxKeptReply bounds the buffer Reset keeps: a rare huge reply should not
// pin its memory in a pool.
const maxKeptReply = 1 << 20

// Reset empties e for another reply of the same encoding, keeping its
// buffer, and says whether it is worth keeping (its buffer is not huge).
// Bytes returned before are overwritten by what is written next.
func (e *Encoder) Reset() bool { return e.w.reset(maxKeptReply) }

// Status writes a bare status object.
func (e *Encoder) Status(s Status) { writeStatus(e.w, s) }

// ExecuteFailed writes /execute's reply to a request it cannot take: the
// failed status and the empty response.
func (e *Encoder) ExecuteFailed(s Status) {
	e.w.mapLen(2)
	e.w.key("status")
	writeStatus(e.w, s)
	e.w.key("response")
	head(e.w, "empty", 0)
	e.w.end()
	e.w.end()
}

// Result writes one command's reply: its status st and the response r in
// the shape of c's kind (an ExecuteResponse).
func (e *Encoder) Result(c *Call, r *api.Response, st Status) {
	e.w.mapLen(2)
	e.w.key("status")
	writeStatus(e.w, st)
	e.w.key("response")
	writeResponse(e.w, &c.c, r, st.OK)
	e.w.end()
}

// BeginBatch starts /batch_execute's reply of n results (each written by
// Result); EndBatch ends it.
func (e *Encoder) BeginBatch(n int) {
	e.w.mapLen(2)
	e.w.key("status")
	writeStatus(e.w, Status{OK: true, Code: CodeOK})
	e.w.key("responses")
	e.w.arrayLen(n)
}

// EndBatch ends the reply BeginBatch started.
func (e *Encoder) EndBatch() {
	e.w.end()
	e.w.end()
}

// Value writes one command's reply whose response is v, encoded as it is
// (MessagePack naming fields by their json tags): the reply of a kind a
// caller serves itself (httpapi's ContextKinds). A failed status carries
// the empty response, as every failed command's does; a v that does not
// encode is an internal error in its place.
func (e *Encoder) Value(st Status, v any, mp bool) {
	var b []byte
	if st.OK {
		var err error
		if b, err = EncodeValue(v, mp); err != nil {
			st, b = Status{Code: CodeInternal, Message: "response does not encode: " + err.Error()}, nil
		}
	}
	e.w.mapLen(2)
	e.w.key("status")
	writeStatus(e.w, st)
	e.w.key("response")
	if b == nil {
		head(e.w, "empty", 0)
		e.w.end()
	} else {
		e.w.raw(b)
	}
	e.w.end()
}

// EncodeValue encodes v as JSON, or as MessagePack naming fields by their
// json tags.
func EncodeValue(v any, mp bool) ([]byte, error) {
	if !mp {
		return json.Marshal(v)
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetCustomStructTag("json")
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeValue decodes one value, JSON or MessagePack (fields named by
// their json tags), into v: a command RawCommands handed over.
func DecodeValue(raw []byte, mp bool, v any) error {
	if !mp {
		return json.Unmarshal(raw, v)
	}
	if err := checkMsgpack(raw); err != nil {
		return err
	}
	return decodeLibrary(raw, v)
}

// RawCommands are the commands of a request body as they were sent: the
// command of an /execute body, or each of a /batch_execute body's, for a
// kind a caller decodes itself. It decodes the body again: only a request
// holding such a kind pays for it.
func RawCommands(body []byte, mp bool, batch bool) ([][]byte, error) {
	if !mp {
		var v struct {
			Command  json.RawMessage   `json:"command"`
			Commands []json.RawMessage `json:"commands"`
		}
		err := json.Unmarshal(body, &v)
		return pick(v.Command, v.Commands, batch), err
	}
	var v struct {
		Command  msgpack.RawMessage   `json:"command"`
		Commands []msgpack.RawMessage `json:"commands"`
	}
	err := DecodeValue(body, true, &v)
	return pick(v.Command, v.Commands, batch), err
}

// pick is one, or many, as byte slices.
func pick[R ~[]byte](one R, many []R, batch bool) [][]byte {
	if !batch {
		return [][]byte{one}
	}
	out := make([][]byte, len(many))
	for i, c := range many {
		out[i] = c
	}
	return out
}

// Decode decodes a request body, MessagePack when mp and JSON otherwise,
// into v. Unknown fields are ignored.
func Decode(body []byte, mp bool, v any) error {
	if !mp {
		return json.Unmarshal(body, v) // unknown fields are ignored, as the original does
	}
	// A first pass over the whole body: every array and map it claims must
	// be there, so no decoder below sizes anything by a length the body
	// does not hold (the library's slice decoding allocates a claimed length
	// at once: 16 bytes could ask for gigabytes).
	if err := checkMsgpack(body); err != nil {
		return err
	}
	switch v := v.(type) {
	case *BatchRequest:
		// v is zero or Reset: Commands' elements, to their capacity, are
		// zero, and so they are again before the library decodes.
		saved := *v
		if decodeFast(body, v) == nil {
			return nil
		}
		clear(saved.Commands[:cap(saved.Commands)])
		*v = saved
	case *Request:
		saved := *v
		if decodeFast(body, v) == nil {
			return nil
		}
		*v = saved
	}
	return decodeLibrary(body, v)
}

// decodeLibrary decodes a checked MessagePack body with the library.
func decodeLibrary(body []byte, v any) error {
	d := msgpack.NewDecoder(bytes.NewReader(body))
	d.SetCustomStructTag("json")
	if err := d.Decode(v); err != nil {
		return err
	}
	return nil
}
