module github.com/temporalstore/temporalstore-go/matrixraft

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/klauspost/compress v1.20.4
	github.com/stretchr/testify v1.12.1
	go.etcd.io/raft/v3 v3.7.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
	google.golang.org/protobuf v1.36.11
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
