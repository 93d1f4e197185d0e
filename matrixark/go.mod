module github.com/temporalstore/temporalstore-go/matrixark

go 1.26.0
