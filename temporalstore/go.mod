module github.com/temporalstore/temporalstore-go/temporalstore

go 1.25.0

require github.com/stretchr/testify v1.12.1

require go.yaml.in/yaml/v3 v3.0.5 // indirect
