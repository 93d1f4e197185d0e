// Package testclock is a manual clock for the module's tests: it moves only
// when told to. A Clock is safe for concurrent use.
package testclock
