package treeindex

import "errors"

// Windows has no tree index yet: no file system is trusted to stamp a
// folder's times on every change of its entries (statFS), so every
// folder is read whole every time (slower, never stale), and a stored
// index is never mapped (its owner check has no uid to compare there
// either). Only exec's session uses the index, and exec refuses on
// Windows.
func statFS(string) fsInfo { return fsInfo{} }

func mapFile(int, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}

func touch(int) {}
