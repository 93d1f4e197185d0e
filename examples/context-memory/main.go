package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "context-memory:", err)
		os.Exit(1)
	}
}

// history is what the demo ingests: a document, two sessions, and a later
// message that corrects the first.
func history(t0 int64) []matrixark.Input {
	day := int64(24 * time.Hour / time.Millisecond)
	return []matrixark.Input{
		{SourceID: "runbook-checkout", Title: "Checkout runbook", User: "ops", TimeMs: t0,
			Body: "When checkout fails, page the payments on-call first. Payment risk scores above 0.9 block orders. " +
				"The checkout team meets on Tuesdays in room Atlas."},
		{Session: "s-101", User: "maria", TimeMs: t0 + day, Messages: []matrixark.Message{
			{Role: "user", Content: "Where does the checkout team meet?"},
			{Role: "assistant", Content: "In room Atlas, on Tuesdays."},
		}},
		{Session: "s-202", User: "maria", TimeMs: t0 + 5*day, Messages: []matrixark.Message{
			{Role: "user", Content: "Correction: the checkout team moved to room Borealis, now on Thursdays."},
			{Role: "user", Content: "Lunch orders go through the new form."},
		}},
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("context-memory", flag.ContinueOnError)
	query := fs.String("query", "where does the checkout team meet now", "the question retrieved for")
	budget := fs.Int("budget", 160, "max_prompt_tokens: prompt and context together, in o200k_base tokens")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ark := matrixark.New(memstore.New(), matrixark.Options{})
	t0 := time.Now().Add(-7 * 24 * time.Hour).UnixMilli()
	for _, in := range history(t0) {
		if _, err := ark.Ingest(ctx, "demo", in); err != nil {
			return err
		}
	}
	res, err := ark.Pack(ctx, "demo", matrixark.PackRequest{
		Retrieve: matrixark.Query{Text: *query}, Prompt: "Answer from the context. " + *query + "?",
		SessionID: "demo-session", MaxPromptTokens: *budget,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n\n", res.InjectedPrompt)
	a := res.Audit
	fmt.Fprintf(out, "audit %s: prompt %d + selected %d tokens of %d; %d blocks in, %d held back\n",
		a.AuditID, a.PromptTokens, a.SelectedTokens, a.MaxPromptTokens, len(res.Selected), len(res.Blocked))
	for _, b := range res.Blocked {
		fmt.Fprintf(out, "  held back (%d tokens): %s\n", b.Tokens, b.Reason)
	}
	return nil
}
