package clusterbench

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// keySlot is key's Redis Cluster hash slot, as the server routes it.
func keySlot(key string) int { return temporalstore.KeySlot([]byte(key)) }

// nodeAddr is a CLUSTER SHARDS node's address, ip:port.
func nodeAddr(n redis.Node) string { return fmt.Sprintf("%s:%d", n.IP, n.Port) }

// slotLeader returns the address of the leader (the node whose role is
// "master") of the shard holding slot, or "" when no shard holds it or its
// shard has no leader.
func slotLeader(shards []redis.ClusterShard, slot int) string {
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start <= int64(slot) && int64(slot) <= r.End {
				for _, n := range sh.Nodes {
					if n.Role == "master" {
						return nodeAddr(n)
					}
				}
				return ""
			}
		}
	}
	return ""
}

// ledSlots counts, per address, the slots it leads, and the slots with a
// leader in all.
func ledSlots(shards []redis.ClusterShard) (map[string]int, int) {
	led := map[string]int{}
	total := 0
	for _, sh := range shards {
		lead := ""
		for _, n := range sh.Nodes {
			if n.Role == "master" {
				lead = nodeAddr(n)
				break
			}
		}
		if lead == "" {
			continue
		}
		for _, r := range sh.Slots {
			led[lead] += int(r.End - r.Start + 1)
			total += int(r.End - r.Start + 1)
		}
	}
	return led, total
}
