module github.com/temporalstore/temporalstore-go/temporalstore

go 1.25.0
