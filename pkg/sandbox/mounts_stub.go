package sandbox

// MountPlan: stand-in until the mounts branch lands (removed at merge).
type MountPlan struct {
	ReadOnly    []string `json:"read_only"`
	Hidden      []string `json:"hidden"`
	HiddenFiles []string `json:"hidden_files"`
	Partial     []string `json:"partial,omitempty"`
}

func PlanMounts(p Policy, roots []Root) MountPlan { return MountPlan{} }
func MountLayer() (bool, string)                  { return false, "not built" }
func (m MountPlan) Apply(emptyFile string) error  { return nil }
