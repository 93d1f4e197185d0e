module github.com/temporalstore/temporalstore-go/matrixcache

go 1.25.0
