module github.com/temporalstore/temporalstore-go/matrixcache

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/klauspost/compress v1.20.4
	github.com/stretchr/testify v1.12.1
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/puzpuzpuz/xsync/v4 v4.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
