module github.com/temporalstore/temporalstore-go/examples

go 1.25.0
