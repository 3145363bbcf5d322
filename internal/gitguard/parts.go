package gitguard

import (
	"strings"
	"sync"
)

// codeKeys are the config keys that make git run a command, or choose
// the file that makes it run one, when the person later runs git in the
// repository: the list of docs/design.md §10 ("Code-running parts"), from
// git-config(1). Keys are as Entry.Key spells them, lowercase but for a
// subsection, which "*" stands for; whole sections are codeSections, and
// what depends on a value (a "!" alias, submodule.*.update, git-lfs's
// keys) is RunsCode's. What is left out, and why, is there too.
var codeKeys = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"core.fsmonitor": true, "core.hookspath": true, "core.sshcommand": true, "core.pager": true,
		"core.editor": true, "core.askpass": true, "core.gitproxy": true, "core.alternaterefscommand": true,
		"sequence.editor": true, "interactive.difffilter": true, "diff.external": true,
		"diff.*.textconv": true, "diff.*.command": true, "merge.*.driver": true,
		"difftool.*.cmd": true, "difftool.*.path": true, "mergetool.*.cmd": true, "mergetool.*.path": true,
		"guitool.*.cmd":     true,
		"credential.helper": true, "credential.*.helper": true,
		"gpg.program": true, "gpg.*.program": true, "gpg.ssh.defaultkeycommand": true,
		"remote.*.uploadpack": true, "remote.*.receivepack": true, "uploadpack.packobjectshook": true,
		"protocol.allow": true, "protocol.*.allow": true,
		"web.browser": true, "browser.*.cmd": true, "browser.*.path": true,
		"man.viewer": true, "man.*.cmd": true, "man.*.path": true,
		"instaweb.httpd": true, "tar.*.command": true,
		"sendemail.smtpserver": true, "sendemail.sendmailcmd": true, "sendemail.tocmd": true,
		"sendemail.cccmd": true, "sendemail.headercmd": true,
		"sendemail.*.smtpserver": true, "sendemail.*.sendmailcmd": true, "sendemail.*.tocmd": true,
		"sendemail.*.cccmd": true, "sendemail.*.headercmd": true,
		"imap.tunnel": true, "init.templatedir": true,
		"include.path": true, "includeif.*.path": true,
	}
})

// codeSections are the sections all of whose keys run code, or choose it.
var codeSections = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"filter": true, "pager": true, "hook": true}
})

// RunsCode says whether the entry e makes git run a command, or brings
// in a file that may (an include).
func RunsCode(e Entry) bool {
	if codeSections()[e.Section] {
		return true
	}
	switch e.Section {
	case "alias":
		return strings.HasPrefix(strings.TrimLeft(e.Value, " \t"), "!")
	case "submodule":
		return e.Name == "update" && strings.HasPrefix(strings.TrimLeft(e.Value, " \t"), "!")
	case "lfs":
		sub := strings.ToLower(e.Subsection)
		return strings.HasPrefix(sub, "customtransfer.") && e.Name == "path" ||
			strings.HasPrefix(sub, "extension.") && (e.Name == "clean" || e.Name == "smudge")
	}
	key := e.Section + "." + e.Name
	if e.Subsection != "" {
		key = e.Section + ".*." + e.Name
		// gpg.ssh.defaultKeyCommand is a subsection's key spelled out.
		if codeKeys()[e.Section+"."+strings.ToLower(e.Subsection)+"."+e.Name] {
			return true
		}
	}
	return codeKeys()[key]
}

// includes says whether e brings in another config file, and which.
func includes(e Entry) (string, bool) {
	if e.Name != "path" || !e.HasValue || e.Value == "" {
		return "", false
	}
	if e.Section == "include" && e.Subsection == "" || e.Section == "includeif" && e.Subsection != "" {
		return e.Value, true
	}
	return "", false
}
