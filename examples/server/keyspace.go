package main

import (
	"context"

	"github.com/temporalstore/temporalstore-go/ferricstore"
)

// streamKeys shows ferricstore's streams to the RESP server's key
// commands (DEL, EXISTS, TYPE, SCAN, ...) as keys of database 0.
type streamKeys struct{ x *ferricstore.Streams }

func (k streamKeys) Type(ctx context.Context, key []byte) (string, error) {
	ok, err := k.x.Exists(ctx, string(key))
	if err != nil || !ok {
		return "", err
	}
	return "stream", nil
}

func (k streamKeys) Delete(ctx context.Context, key []byte) (bool, error) {
	return k.x.DeleteKey(ctx, string(key))
}

func (k streamKeys) Keys(ctx context.Context, fn func(key []byte, typ string) bool) error {
	return k.x.Keys(ctx, func(key string) bool { return fn([]byte(key), "stream") })
}

func (k streamKeys) Flush(ctx context.Context) error {
	_, err := k.x.Flush(ctx)
	return err
}
