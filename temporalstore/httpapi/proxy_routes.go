package httpapi

import (
	"maps"
	"slices"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// proxyPrefix starts the original proxy's typed routes,
// /ProxyService/<Verb>.
const proxyPrefix = "/ProxyService/"

// proxyVerbs are the original proxy's typed routes: a body {namespace,
// table_name, key, ...} whose other fields are those of the command kind
// the verb names, which each completes (its kind, and a field the verb
// implies). They run as /execute runs that command, and answer as it does.
var proxyVerbs = map[string]func(c *Command){
	"Get":      kind("string_get"),
	"Set":      kind("string_set"),
	"SetEx":    kind("string_set_ex"),
	"Delete":   kind("common_delete"),
	"Expire":   kind("common_expire"),
	"Ttl":      kind("common_ttl"),
	"Exists":   kind("common_exists"),
	"HGet":     kind("hash_get"),
	"HSet":     kind("hash_set"),
	"HDel":     kind("hash_delete"),
	"HMGet":    kind("hash_multi_get"),
	"HMSet":    kind("hash_multi_set"),
	"HGetAll":  kind("hash_get_all"),
	"HLen":     kind("hash_len"),
	"SAdd":     kind("set_add"),
	"SMembers": kind("set_members"),
	"SRem":     kind("set_remove"),
	// A policy makes it the write that says whether anything changed.
	"FeatureAdd": func(c *Command) {
		c.Kind = "feature_append"
		if c.Policy != "" {
			c.Kind = "feature_append_with_policy"
		}
	},
	// Filters make it the filtered read.
	"FeatureQuery": func(c *Command) {
		c.Kind = "feature_query"
		if len(c.Filters) > 0 {
			c.Kind = "feature_query_filtered"
		}
	},
	"FeatureReplace":  kind("feature_replace"),
	"FeatureDelete":   kind("feature_delete"),
	"FeatureAggQuery": kind("feature_agg_query"),
	"SequenceAdd":     kind("sequence_add"),
	"SequenceQuery":   kind("sequence_query"),
	// precision_ms and ttl_ms are optional: the kind with options takes
	// both forms.
	"ControlStateIncrement": kind("control_state_increment_with_options"),
	"ControlStateCount":     kind("control_state_count"),
	// The counter family's set.
	"ControlStateHset": func(c *Command) {
		c.Kind, c.Family = "control_state_set", "h"
	},
	"ControlStateSelectionSet":   kind("control_state_selection_set"),
	"ControlStateFolSet":         kind("control_state_selection_set"),
	"ControlStateSelectionQuery": kind("control_state_selection_query"),
	"ControlStateFolQuery":       kind("control_state_selection_query"),
	"ControlStateManager":        kind("control_state_manager"),
}

func kind(k string) func(c *Command) { return func(c *Command) { c.Kind = k } }

// proxyVerbList names the verbs, for the refusal of another.
var proxyVerbList = strings.Join(slices.Sorted(maps.Keys(proxyVerbs)), ", ")

// proxySpecs are the typed routes' specs, by path.
var proxySpecs = func() map[string]*cmdSpec {
	m := make(map[string]*cmdSpec, len(proxyVerbs))
	for verb, complete := range proxyVerbs {
		m[proxyPrefix+verb] = &cmdSpec{name: proxyPrefix + verb, single: true, decode: decodeProxy(complete)}
	}
	return m
}()

// requestAddress is the address part of a body: the table and tenant its
// commands run in and as (shard_id is checked, and unused).
type requestAddress struct {
	ShardID   *wire.ShardID `json:"shard_id,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	TableName string        `json:"table_name,omitempty"`
	Tenant    string        `json:"tenant,omitempty"`
}

// decodeAddressed decodes body into v, whose address is a, and addresses
// x's request with it.
func decodeAddressed(body []byte, mp bool, v any, a *requestAddress, x *cmdReq) error {
	if err := wire.DecodeValue(body, mp, v); err != nil {
		return err
	}
	x.req.Namespace, x.req.TableName, x.req.Tenant = a.Namespace, a.TableName, a.Tenant
	return nil
}

// decodeProxy reads a typed route's body: its address, and the command
// complete makes of the rest (a kind in the body is the verb's).
func decodeProxy(complete func(c *Command)) func(body []byte, mp bool, x *cmdReq) error {
	return func(body []byte, mp bool, x *cmdReq) error {
		var a requestAddress
		if err := decodeAddressed(body, mp, &a, &a, x); err != nil {
			return err
		}
		x.req.Commands = append(x.req.Commands[:0], Command{})
		c := &x.req.Commands[0]
		if err := wire.DecodeValue(body, mp, c); err != nil {
			return err
		}
		complete(c)
		return nil
	}
}
