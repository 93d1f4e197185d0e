module github.com/temporalstore/temporalstore-go/matrixark

go 1.26.0

require (
	github.com/google/btree v1.1.3
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
	github.com/stretchr/testify v1.12.1
	golang.org/x/time v0.16.0
)

require (
	github.com/dlclark/regexp2 v1.10.0 // indirect
	github.com/google/uuid v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
