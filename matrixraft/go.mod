module github.com/temporalstore/temporalstore-go/matrixraft

go 1.25.0
