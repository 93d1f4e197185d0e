// Package enginebench is `bench engine`: the temporalstore engine through
// its Go API, in process, against the figures its issue sets and the peers
// it names.
//
//   - Resident index bytes per key at 2k, 8k, 20k and 1M keys (the
//     original's 86.3, 50.6 and 39.4 B at 2k, 8k and 20k are the bars).
//   - Write amplification of durable SETs of incompressible 64 B to 4 KiB
//     values: log bytes, log plus a checkpoint, and the bytes the process
//     sent to the block layer (/proc/self/io), over the key and value bytes
//     written.
//   - Durable SET throughput at 64 concurrent writers against a
//     single-node etcd embedded in the same process (clientv3 Put),
//     alternating over repeats.
//   - Memory per key against a redis-server the benchmark starts, holding
//     the same keys (INFO memory's used_memory).
package enginebench
