package config

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// decodeConfig parses a config file's bytes in the format typ ("json",
// "toml", anything else YAML) into one flat map: each key lowercased, a
// nested map's keys joined to its own with "." (`network: {mode: x}` is
// "network.mode"), every other value as the format's parser gives it,
// lists kept as lists. An empty map is a value of its own, so a setting
// given `{}` is refused by its type check rather than dropped. A key that
// comes out twice (`Mode` and `mode`, or `a.b` and `a: {b: …}`) is
// refused: which one would win is not something a file should rely on.
//
// Errors are the parser's own (whereMalformed reads them), or twiceError.
func decodeConfig(data []byte, typ string) (map[string]any, error) {
	doc := map[string]any{}
	var err error
	switch typ {
	case "json":
		err = json.Unmarshal(data, &doc)
	case "toml":
		err = toml.Unmarshal(data, &doc)
	default:
		err = yaml.Unmarshal(data, &doc)
	}
	if err != nil {
		return nil, err
	}
	flat := map[string]any{}
	if key := flatten(flat, "", doc); key != "" {
		return nil, twiceError{key}
	}
	return flat, nil
}

// twiceError is a key a config file gives twice once case and nesting
// are set aside.
type twiceError struct{ key string }

func (e twiceError) Error() string {
	return "key " + shownKey(e.key) + " given twice (keys ignore case, and \"a.b\" is \"b\" under \"a\")"
}

// flatten adds m's leaves to into under prefix, and returns a key that
// was already there, or "".
func flatten(into map[string]any, prefix string, m map[string]any) string {
	for k, v := range m {
		key := strings.ToLower(k)
		if prefix != "" {
			key = prefix + "." + key
		}
		if sub, ok := asMap(v); ok && len(sub) > 0 {
			if twice := flatten(into, key, sub); twice != "" {
				return twice
			}
			continue
		}
		if _, ok := into[key]; ok {
			return key
		}
		into[key] = lowered(v)
	}
	return ""
}

// asMap reads a parsed map, whose keys YAML may give as other things than
// strings (`1: x`), which are then spelt as fmt prints them.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out, true
	}
	return nil, false
}

// lowered is a value with the keys of the maps inside it (in lists, or an
// empty map) lowercased, as a setting's keys are.
func lowered(v any) any {
	if m, ok := asMap(v); ok {
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[strings.ToLower(k)] = lowered(x)
		}
		return out
	}
	if items, ok := v.([]any); ok {
		out := make([]any, len(items))
		for i, x := range items {
			out[i] = lowered(x)
		}
		return out
	}
	return v
}
