// Package ferricstore provides streams, pub/sub, durable flows and queues,
// and a key-value store, served over RESP and usable directly from Go.
//
// # What this module owns
//
//   - Streams: XADD, XRANGE, XREAD and consumer groups.
//   - Pub/sub with exact and pattern subscriptions, fan-out, and isolation of
//     slow consumers so one cannot stall the others.
//   - Durable flows and queues with leases, fencing and retries.
//   - A key-value store.
//
// The planned entry point is Open(Options).
//
// # Dependencies
//
// Durability and replication come from matrixraft. This module imports no
// other module of this repository.
//
// So far the stream data type is built (package stream); the store, its
// durability and its RESP commands are not.
package ferricstore
