package plan

// How the shell of a session sees a cache (Cache.Layer).
const (
	// CacheOverlay: readable and writable through a copy-on-write
	// overlay; what the session writes is discarded at its end.
	CacheOverlay = "overlay"
	// CacheDirect: a writable root of the session's kernel layer, as
	// the trusted caches_writable: direct asks; the session's writes
	// stay, and can change what the person's builds use.
	CacheDirect = "direct"
	// CacheInRoot: it lies in a writable root, and is as writable as
	// the root is.
	CacheInRoot = "writable-root"
	// CacheReadOnly: left as it is, read-only for the shell; Why says
	// why.
	CacheReadOnly = "read-only"
)

// Cache is one toolchain cache of a session and how its shell sees it.
type Cache struct {
	// Path is the canonical folder.
	Path   string `json:"path"`
	Source string `json:"source"`
	// Layer is CacheOverlay, CacheDirect, CacheInRoot or CacheReadOnly.
	Layer string `json:"layer"`
	// Within names the cache that holds this one, whose layer covers
	// it; "" for none.
	Within string `json:"within,omitempty"`
	// Why says why a cache is read-only, or what the layer means.
	Why string `json:"why,omitempty"`
}

// Writable reports whether the shell may write the cache.
func (c Cache) Writable() bool { return c.Layer != CacheReadOnly }
