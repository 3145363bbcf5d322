// Package layout plans an exec session's view of the file system on the
// host, from the policy: the mount plan (what the session may neither
// write nor read although Landlock alone would let it), the mount layer's
// probes and pins, the sockets to hide, the placeholders of protected
// paths, the read view of the home folders and the caches' overlay
// folders. The supervisor computes it into the session's plan; the child,
// which knows no policy, never imports it.
package layout
