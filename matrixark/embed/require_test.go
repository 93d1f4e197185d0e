package embed

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRequireModelFromEnv(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"1", true}, {"true", true}, {"TRUE", true}, {" true ", true}, {"True", true},
		{"", false}, {"0", false}, {"false", false}, {"yes", false}, {"2", false}, {"on", false},
	}
	for _, tt := range tests {
		got := RequireModelFromEnv(env(map[string]string{EnvRequireModel: tt.v}))
		require.Equal(t, tt.want, got, "%q", tt.v)
	}
}

func requireModelErr(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, ErrModelRequired)
	require.ErrorContains(t, err, "model_required_but_provider_is_mock")
}

// The hash embedder used directly fails for ingest-shaped batches and for
// single queries alike.
func TestRequireModelRefusesMock(t *testing.T) {
	ingest := []string{"checkout: the payment step times out", "kind=Doc; title=checkout", "raw chunk text"}
	query := []string{"why does checkout fail?"}

	fromEnv, err := FromEnv(env(map[string]string{EnvRequireModel: "1"}))
	require.NoError(t, err)
	embedders := map[string]Embedder{
		"wrapped":       RequireModel(NewHash("")),
		"from env":      fromEnv,
		"wrapped twice": RequireModel(RequireModel(NewHash(""))),
	}
	for name, e := range embedders {
		t.Run(name, func(t *testing.T) {
			for _, texts := range [][]string{ingest, query, nil} {
				vecs, err := e.Embed(context.Background(), texts)
				requireModelErr(t, err)
				require.Nil(t, vecs)
			}
			_, info, err := EmbedWithInfo(context.Background(), e, query)
			requireModelErr(t, err)
			require.Equal(t, ProviderMock, info.Provider)
		})
	}

	// Without the rule the mock works: the refusal above comes from the rule.
	plain, err := FromEnv(env(nil))
	require.NoError(t, err)
	vecs, err := plain.Embed(context.Background(), query)
	require.NoError(t, err)
	require.Len(t, vecs, 1)
}

func TestRequireModelRefusesMockFallback(t *testing.T) {
	down := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		http.Error(w, "down", http.StatusBadGateway)
	})
	nw := &noWait{}

	// The option stops the provider before it calls the mock.
	opts := OpenAIOptionsFromEnv(env(map[string]string{EnvBaseURL: down.URL, EnvRequireModel: "true"}))
	opts.Backoff, opts.Fallback = nw.backoff, NewHash("")
	withOption, err := NewOpenAI(opts)
	require.NoError(t, err)
	_, err = withOption.Embed(context.Background(), []string{"q"})
	requireModelErr(t, err)
	require.ErrorIs(t, err, ErrProvider, "the provider's own failure is kept")

	// The wrapper catches a provider configured without the option.
	inner, err := NewOpenAI(OpenAIOptions{BaseURL: down.URL, Backoff: nw.backoff, Fallback: NewHash("")})
	require.NoError(t, err)
	wrapped := RequireModel(inner)
	require.Equal(t, inner.Info(), wrapped.Info())
	_, err = wrapped.Embed(context.Background(), []string{"q"})
	requireModelErr(t, err)

	// A healthy provider passes through the wrapper.
	up := newFakeServer(t, nil)
	healthy, err := NewOpenAI(OpenAIOptions{BaseURL: up.URL, Fallback: NewHash(""), RequireModel: true})
	require.NoError(t, err)
	vecs, info, err := EmbedWithInfo(context.Background(), RequireModel(healthy), []string{"q"})
	require.NoError(t, err)
	require.Len(t, vecs, 1)
	require.Equal(t, ProviderOpenAI, info.Provider)
}
