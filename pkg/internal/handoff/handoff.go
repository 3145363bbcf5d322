// Package handoff carries what pkg/sandbox loaded to pkg/fsops, which
// cannot see a Sandbox's fields and must not be shown them through an
// exported name: pkg/sandbox registers the one function that reads them
// when it is initialized, and pkg/fsops, which imports pkg/sandbox, calls
// it. Nothing else registers.
package handoff

import "github.com/dshfs/dsh-fs/internal/config"

var settingsOf func(sb any) (*config.Settings, error)

// Register is pkg/sandbox's, at its init: f returns the settings of the
// *sandbox.Sandbox it is given.
func Register(f func(sb any) (*config.Settings, error)) { settingsOf = f }

// Settings returns the settings the *sandbox.Sandbox sb loaded, which
// every call under it starts from.
func Settings(sb any) (*config.Settings, error) { return settingsOf(sb) }
