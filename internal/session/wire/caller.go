package wire

import (
	"fmt"
)

// maxCallerBytes bounds the command line read for an approver.
const maxCallerBytes = 4096

// ID names the session of r for an approver: its supervisor's pid and
// start time, which no other session shares while r's lives.
func (r *Record) ID() string {
	if r == nil || r.Supervisor <= 0 {
		return ""
	}
	return fmt.Sprintf("%d-%d", r.Supervisor, r.SupervisorStart)
}
