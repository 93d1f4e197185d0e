module github.com/temporalstore/temporalstore-go/temporalstore

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/stretchr/testify v1.12.1
	github.com/temporalstore/temporalstore-go/matrixraft v0.0.0
	golang.org/x/time v0.16.0
)

require go.etcd.io/bbolt v1.5.0 // indirect

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/temporalstore/temporalstore-go/matrixcache v0.0.0
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/temporalstore/temporalstore-go/matrixraft => ../matrixraft

replace github.com/temporalstore/temporalstore-go/matrixcache => ../matrixcache
