package embed

// Environment variables read by the FromEnv helpers. Each helper takes a
// getenv function instead of reading the process environment, so callers
// and tests decide where settings come from.
const (
	// EnvBaseURL is the OpenAI-compatible server, e.g. http://localhost:11434/v1.
	EnvBaseURL = "MATRIXARK_EMBED_BASE_URL"
	// EnvModel is the embedding model name.
	EnvModel = "MATRIXARK_EMBEDDING_MODEL"
	// EnvAPIKeyEnv names the variable that holds the API key (the key itself
	// never sits in configuration).
	EnvAPIKeyEnv = "MATRIXARK_EMBED_API_KEY_ENV"
	// EnvRequireModel set to 1 or true refuses the mock embedder.
	EnvRequireModel = "MATRIXARK_REQUIRE_MODEL_EMBEDDINGS"
)

// OpenAIOptionsFromEnv reads EnvBaseURL, EnvModel, EnvAPIKeyEnv and
// EnvRequireModel through getenv. The result looks the key up through the
// same getenv. Unset values keep NewOpenAI's defaults.
func OpenAIOptionsFromEnv(getenv func(string) string) OpenAIOptions {
	return OpenAIOptions{
		BaseURL:      getenv(EnvBaseURL),
		Model:        getenv(EnvModel),
		APIKeyEnv:    getenv(EnvAPIKeyEnv),
		Getenv:       getenv,
		RequireModel: RequireModelFromEnv(getenv),
	}
}

// FromEnv builds the embedder a deployment asks for: the OpenAI-compatible
// provider when EnvBaseURL is set, else the hash embedder under
// DefaultHashModel (never under EnvModel: mock vectors must not carry a real
// model's encoder id).
// When EnvRequireModel is set the result is wrapped in RequireModel, so a
// deployment without a model server fails loudly instead of embedding with
// the mock.
func FromEnv(getenv func(string) string) (Embedder, error) {
	var e Embedder
	if getenv(EnvBaseURL) != "" {
		o, err := NewOpenAI(OpenAIOptionsFromEnv(getenv))
		if err != nil {
			return nil, err
		}
		e = o
	} else {
		e = NewHash(DefaultHashModel)
	}
	if RequireModelFromEnv(getenv) {
		e = RequireModel(e)
	}
	return e, nil
}
