// Package pubsub is Redis's publish/subscribe matching: Match is the glob
// Redis's PSUBSCRIBE, KEYS and SCAN MATCH use, byte for byte.
package pubsub
