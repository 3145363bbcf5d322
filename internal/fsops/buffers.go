package fsops

import "sync"

// The buffers of copies and reads come from pools. A long-lived process
// (dsh-fs mcp) makes many small calls, and a fresh megabyte for each,
// zeroed and then collected, cost it more than the call's own work: a
// 1 KiB write took three. No buffer is kept past the call that took it.
var (
	copyBuffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}
	readBuffers = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}
)

// copyBuffer takes a copyBufferSize buffer; give it back with
// putCopyBuffer once nothing refers to it.
func copyBuffer() *[]byte     { return copyBuffers.Get().(*[]byte) }
func putCopyBuffer(b *[]byte) { copyBuffers.Put(b) }

// readBuffer takes a readChunk buffer; give it back with putReadBuffer.
func readBuffer() *[]byte     { return readBuffers.Get().(*[]byte) }
func putReadBuffer(b *[]byte) { readBuffers.Put(b) }
