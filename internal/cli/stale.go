package cli

import (
	"github.com/spf13/pflag"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// FS_STALE with the diff since the read (docs/design.md §5): the content
// the caller read is known when it gives it back (--if-match-content),
// or, inside a dsh-fs exec session, when a read of the same session
// returned it: the session's supervisor remembers it (sessionMemory).
// Outside a session a CLI call remembers nothing.

// flagIfMatchContent is write's and edit's --if-match-content.
const flagIfMatchContent = "if-match-content"

// addIfMatchContent adds --if-match-content into name.
func addIfMatchContent(fs *pflag.FlagSet, name *string) {
	fs.StringVar(name, flagIfMatchContent, "", "with --if-match: the content you read, from this file or - for stdin, byte for byte; a stale --if-match then shows the diff since it")
}

// checkGivenBack refuses what --if-match-content cannot be, before any
// input is read: an empty name, or standard input that another flag
// (others, their values) reads too.
func checkGivenBack(op string, name *string, others ...namedSource) error {
	if name == nil {
		return nil
	}
	if *name == "" {
		return fserr.New(fserr.InvalidArgument, op+": --"+flagIfMatchContent+" needs a file name, or - for stdin")
	}
	for _, o := range others {
		if isStdin(name) && isStdin(o.value) {
			return fserr.New(fserr.InvalidArgument, op+": --"+o.flag+" and --"+flagIfMatchContent+" cannot both be - (standard input)")
		}
	}
	return nil
}

// namedSource is a flag that names a source, and its value (nil when
// not given).
type namedSource struct {
	flag  string
	value *string
}

// givenBack reads the content --if-match-content names (nil when not
// given) as any source is read (deny_read applies), and checks it
// against --if-match: it must be what the hash names.
func (c *call) givenBack(op string, name *string, ifMatch string) ([]byte, error) {
	if name == nil {
		return nil, nil
	}
	data, err := c.readSource(c.app.Stdin, op, "--"+flagIfMatchContent, *name)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, fsops.CheckGiven(op, ifMatch, data)
}

// sessionMemory is the memory of the exec session the call runs in: its
// supervisor's, over the session's channel; nil outside a session or
// without a channel (one that is not the supervisor's remembers nothing).
func (c *call) sessionMemory() request.Memory {
	if c.settings.Session == nil {
		return nil
	}
	v, ok := c.app.LookupEnv(wire.BrokerEnv)
	if !ok || v == "" {
		return nil
	}
	fd, err := wire.EnvFD(v)
	if err != nil {
		return nil
	}
	return &brokerMemory{fd: fd}
}

// brokerMemory is a session's memory at its supervisor, over the channel
// fd, checked to be the broker (wire.CheckBroker) on first use, so a call
// that remembers nothing pays nothing for it. A failure to reach it
// remembers nothing and recalls nothing: the memory only adds a diff to
// FS_STALE, and a call never fails for it.
type brokerMemory struct {
	fd    int
	once  sync.Once
	valid bool
}

// ok says fd is the session's broker channel, checked once.
func (m *brokerMemory) ok() bool {
	m.once.Do(func() { m.valid = wire.CheckBroker(m.fd) == nil })
	return m.valid
}

// Remember hands content to the supervisor; the read's result is the
// same whether it took it or not.
func (m *brokerMemory) Remember(content []byte) {
	if m.ok() {
		wire.Remember(m.fd, content)
	}
}

// Recall asks the supervisor for the content whose hash is sum.
func (m *brokerMemory) Recall(sum string) []byte {
	if !m.ok() {
		return nil
	}
	content, err := wire.Recall(m.fd, sum)
	if err != nil {
		return nil
	}
	return content
}
