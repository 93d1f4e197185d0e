module github.com/temporalstore/temporalstore-go/ferricstore

go 1.26.0

require (
	github.com/google/btree v1.1.3
	github.com/stretchr/testify v1.12.1
	github.com/temporalstore/temporalstore-go/matrixraft v0.1.0
)

require (
	github.com/klauspost/compress v1.20.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
