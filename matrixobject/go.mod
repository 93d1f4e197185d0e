module github.com/temporalstore/temporalstore-go/matrixobject

go 1.25.0
