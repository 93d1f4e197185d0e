// Command context-memory shows matrixark in a process of its own: it
// ingests a short support history (a runbook, two conversations, a later
// correction), asks a question, and prints the prompt packed to a token
// budget with what was held back, as the pack's audit records it.
//
//	go run ./examples/context-memory -budget 160 -query "where does the checkout team meet now"
//
// The same calls run against a server through its HTTP routes
// (/context/ingest, /context/pack) or the Python Memory client.
package main
