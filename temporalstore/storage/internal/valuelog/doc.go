// Package valuelog holds what the replicated logs (raftlog, sharedlog)
// share about the local value log every replica keeps: which of its
// records the shard has yet to be handed by an Append call, the
// conversions to package storage's types, and the state a replica far
// behind is sent (a checkpoint image and the value log from its front).
package valuelog
