module github.com/temporalstore/temporalstore-go/temporalstore

go 1.26.0

require (
	github.com/DataDog/sketches-go v1.4.8
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/prometheus/client_golang v1.25.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/stretchr/testify v1.12.1
	github.com/temporalstore/temporalstore-go/matrixobject v0.1.0
	github.com/temporalstore/temporalstore-go/matrixraft v0.1.0
	github.com/vmihailenco/msgpack/v5 v5.4.1
	github.com/yuin/gopher-lua v1.1.2
	golang.org/x/time v0.16.0
	lukechampine.com/blake3 v1.4.1
)

require (
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/temporalstore/temporalstore-go/matrixcache v0.1.0
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
