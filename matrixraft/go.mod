module github.com/temporalstore/temporalstore-go/matrixraft

go 1.26.0

require (
	github.com/klauspost/compress v1.20.4
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
