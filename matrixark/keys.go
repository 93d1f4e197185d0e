package matrixark

import (
	"encoding/binary"
)

// Key families, after the original's: every key starts with its family and
// the tenant, so a tenant's records are one range and no two tenants share
// a key.
const (
	famNode   = "ctx:node:"
	famEvent  = "ctx:event:"
	famEntity = "ctx:entity:"
	famSpace  = "ctx:space:"
	famAudit  = "ctx:audit:"
	famSource = "ctx:source:"
)

// tenantKey is family, tenant and ':' — the prefix of a tenant's records
// of that family. A tenant holds no ':' (Validate), so no tenant's prefix
// is another's.
func tenantKey(fam, tenant string) []byte {
	k := make([]byte, 0, len(fam)+len(tenant)+1+24)
	k = append(k, fam...)
	k = append(k, tenant...)
	return append(k, ':')
}

func nodeKey(tenant string, node uint64) []byte {
	return binary.BigEndian.AppendUint64(tenantKey(famNode, tenant), node)
}

// eventKey orders a node's events by time, then by their sequence within
// a millisecond, so a reverse scan of the node's prefix is newest first.
func eventKey(tenant string, node uint64, ms int64, seq uint32) []byte {
	k := binary.BigEndian.AppendUint64(tenantKey(famEvent, tenant), node)
	k = binary.BigEndian.AppendUint64(k, uint64(ms))
	return binary.BigEndian.AppendUint32(k, seq)
}

func eventPrefix(tenant string, node uint64) []byte {
	return binary.BigEndian.AppendUint64(tenantKey(famEvent, tenant), node)
}

func entityKey(tenant string, node, entity uint64) []byte {
	k := binary.BigEndian.AppendUint64(tenantKey(famEntity, tenant), node)
	return binary.BigEndian.AppendUint64(k, entity)
}

func entityPrefix(tenant string, node uint64) []byte {
	return binary.BigEndian.AppendUint64(tenantKey(famEntity, tenant), node)
}

func spaceKey(tenant string) []byte { return tenantKey(famSpace, tenant) }

// auditKey orders a session's audits by request time.
func auditKey(tenant string, session uint64, ms int64, seq uint32) []byte {
	k := binary.BigEndian.AppendUint64(tenantKey(famAudit, tenant), session)
	k = binary.BigEndian.AppendUint64(k, uint64(ms))
	return binary.BigEndian.AppendUint32(k, seq)
}

func auditPrefix(tenant string, session uint64) []byte {
	return binary.BigEndian.AppendUint64(tenantKey(famAudit, tenant), session)
}

// sourceKey marks a (source, body) already ingested into node: ingesting
// it again changes nothing. Keyed under the node, so Forget drops them.
func sourceKey(tenant string, node, sourceBody uint64) []byte {
	k := binary.BigEndian.AppendUint64(tenantKey(famSource, tenant), node)
	return binary.BigEndian.AppendUint64(k, sourceBody)
}

func sourcePrefix(tenant string, node uint64) []byte {
	return binary.BigEndian.AppendUint64(tenantKey(famSource, tenant), node)
}
