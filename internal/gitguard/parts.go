package gitguard

import (
	"strings"
	"sync"
)

// The code-running keys: config entries that make git run a command (or
// choose the file that makes it run one) when the person later runs git
// in the repository (docs/design.md §10). Keys are as Entry.Key spells
// them, lowercase but for a subsection, which "*" stands for.
//
// From git's documentation (git-config(1) and the pages it includes):
//   - core: fsmonitor, hooksPath, sshCommand, pager, editor, askPass,
//     gitProxy, alternateRefsCommand;
//   - sequence.editor, interactive.diffFilter, diff.external;
//   - every filter.* (clean, smudge, process), diff.*.textconv and
//     diff.*.command, merge.*.driver;
//   - difftool.*.cmd and .path, mergetool.*.cmd and .path, guitool.*.cmd;
//   - pager.* (a command per git command);
//   - alias.* whose value starts with "!";
//   - credential.helper and credential.*.helper;
//   - gpg.program, gpg.*.program, gpg.ssh.defaultKeyCommand;
//   - remote.*.uploadpack and .receivepack (run locally for a local or
//     ssh remote), uploadpack.packObjectsHook;
//   - protocol.allow and protocol.*.allow (they enable ext::, which runs
//     a command named in a URL);
//   - submodule.*.update whose value starts with "!";
//   - web.browser, browser.*.cmd and .path, man.viewer, man.*.cmd and
//     .path, instaweb.httpd, tar.*.command;
//   - sendemail's smtpServer (a sendmail path), sendmailCmd, toCmd,
//     ccCmd, headerCmd, and sendemail.*.<the same> per identity;
//   - hook.* (config-based hooks of newer git);
//   - imap.tunnel (git imap-send runs it), init.templateDir (a later git
//     init there copies hooks from it);
//   - git-lfs's lfs.customtransfer.*.path and lfs.extension.*.clean and
//     .smudge (written [lfs "customtransfer.NAME"] path = …);
//   - include.path and includeIf.*.path, which bring in another file's
//     keys, the code-running ones with them.
//
// Left out, because they run nothing: core.attributesFile (attributes
// only choose among drivers defined in config), core.worktree, url.*
// (insteadOf runs nothing while ext:: stays disallowed), remote.*.url.
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
