// Package trust says whether a file may be believed by who could have
// written it: a trusted config file, a session's record and the folders
// above them are believed only where nobody but root and the caller could
// have written them, ownership judged as the kernel shows it in the
// caller's user namespace. Mechanism only: no policy type.
package trust
