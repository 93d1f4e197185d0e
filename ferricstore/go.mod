module github.com/temporalstore/temporalstore-go/ferricstore

go 1.26.0
