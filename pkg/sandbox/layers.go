package sandbox

// Layers says which enforcement layers guard a mutation under a policy.
type Layers struct {
	// Layers names the active layers, outermost first: "lexical" (the
	// fence's check on canonical paths), "root" (the mutation runs
	// through a handle confined to the writable root) and "landlock" (the
	// kernel refuses writes outside the writable roots).
	Layers []string `json:"layers"`
}

// ActiveLayers returns the layers that guard a mutation under p.
func ActiveLayers(p Policy) Layers {
	switch p.Mode {
	case WorkspaceWrite:
		return Layers{Layers: []string{"lexical"}}
	case ReadOnly:
		return Layers{Layers: []string{"mode"}}
	}
	return Layers{Layers: []string{}}
}
