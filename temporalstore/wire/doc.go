// Package wire is what crosses the HTTP surface: the request shapes
// (Request, BatchRequest, Command, in JSON or MessagePack, those of
// TemporalStore's Rust implementation — "the original" in comments below —
// and the engine's own kinds), their translation to and from the engine's
// commands, package api's (Translate, FromEngine), the reply shapes (ExecuteResponse,
// BatchResponse, Response, Status) with their encoder (Encoder) and
// decoding back to the engine's responses (Response.Engine), and the status
// codes with the errors they stand for (Status.Err matches the engine's
// sentinels with errors.Is). Decode reads a MessagePack request in place:
// its keys and values alias the body, which must not change while they are
// in use. RawCommands and DecodeValue hand a caller the commands of kinds
// it serves itself (httpapi's ContextKinds).
//
// It imports api and MessagePack, and no storage, server or metrics:
// package client is built on the two, package httpapi serves them.
//
//	var r wire.ExecuteResponse
//	_ = json.Unmarshal(body, &r)
//	if err := r.Status.Err(); err != nil { ... }
//	resp, err := r.Response.Engine(cmd) // the engine's Response for cmd
package wire
